package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"syscall"
)

// cpioWriter writes a cpio archive in the "newc" format the Linux kernel
// unpacks as an initramfs. It needs no root rights: device nodes are
// written as headers, not made with mknod.
type cpioWriter struct {
	w   io.Writer
	n   int64 // bytes written, for the 4-byte alignment
	ino int
	err error
}

func (c *cpioWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.err = err
}

func (c *cpioWriter) pad() {
	if r := c.n % 4; r != 0 {
		c.write(make([]byte, 4-r))
	}
}

// entry writes one header, the name and the data.
func (c *cpioWriter) entry(name string, mode uint32, rdevMajor, rdevMinor int, data []byte) {
	c.ino++
	nlink := 1
	if mode&syscall.S_IFMT == syscall.S_IFDIR {
		nlink = 2
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rdevMajor, rdevMinor, len(name)+1, 0)
	c.write([]byte(hdr))
	c.write([]byte(name))
	c.write([]byte{0})
	c.pad()
	c.write(data)
	c.pad()
}

// Dir adds a directory.
func (c *cpioWriter) Dir(name string) { c.entry(name, syscall.S_IFDIR|0o755, 0, 0, nil) }

// CharDev adds a character device node.
func (c *cpioWriter) CharDev(name string, major, minor int) {
	c.entry(name, syscall.S_IFCHR|0o600, major, minor, nil)
}

// File adds a regular file with the given permission bits.
func (c *cpioWriter) File(name string, perm uint32, data []byte) {
	c.entry(name, syscall.S_IFREG|perm, 0, 0, data)
}

// HostFile adds the regular file at path (symbolic links followed) as name.
func (c *cpioWriter) HostFile(name, path string) {
	if c.err != nil {
		return
	}
	fi, err := os.Stat(path)
	if err != nil {
		c.err = err
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		c.err = err
		return
	}
	c.File(name, uint32(fi.Mode().Perm()), data)
}

// Tree adds the directory tree at path as name: directories and regular
// files (symbolic links followed), in sorted order.
func (c *cpioWriter) Tree(name, path string) {
	if c.err != nil {
		return
	}
	var files []string
	err := filepath.Walk(path, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		c.err = err
		return
	}
	sort.Strings(files)
	for _, p := range files {
		rel, err := filepath.Rel(path, p)
		if err != nil {
			c.err = err
			return
		}
		dst := name
		if rel != "." {
			dst = name + "/" + filepath.ToSlash(rel)
		}
		fi, err := os.Stat(p)
		if err != nil {
			c.err = err
			return
		}
		switch {
		case fi.IsDir():
			c.Dir(dst)
		case fi.Mode().IsRegular():
			c.HostFile(dst, p)
		default:
			fmt.Fprintf(os.Stderr, "runner: skipping %s (not a regular file or directory)\n", p)
		}
	}
}

// Close writes the trailer.
func (c *cpioWriter) Close() error {
	c.entry("TRAILER!!!", 0, 0, 0, nil)
	return c.err
}
