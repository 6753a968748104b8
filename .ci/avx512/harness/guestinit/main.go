//go:build linux

// Command guestinit is the /init of the initramfs that emulate.sh boots
// in Bochs. It mounts proc, sys, devtmpfs and a tmpfs on /tmp, runs
// /harness/pkg.test with the arguments listed in /harness/args (one
// NUL-terminated argument each) from the directory /harness/pkg, with its
// output on the console (the emulated serial port), then prints
//
//	@@AVX512EMU-EXIT <status>@@
//
// and powers the machine off. The runner on the host reads the serial
// log for the lines that start with @@AVX512EMU-.
package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

const (
	testBinary = "/harness/pkg.test"
	argsFile   = "/harness/args"
	workDir    = "/harness/pkg"

	tcsbrk = 0x5409 // ioctl TCSBRK; with argument 1 it is tcdrain
)

func main() {
	status := run()
	fmt.Printf("\n@@AVX512EMU-EXIT %d@@\n", status)
	syscall.Sync()
	// Wait until the serial port has sent everything (tcdrain): the
	// emulated UART runs at 115200 baud in emulated time, and a
	// traceback takes a while.
	_, _, _ = syscall.Syscall(syscall.SYS_IOCTL, 1, tcsbrk, 1)
	time.Sleep(100 * time.Millisecond)
	if err := syscall.Reboot(syscall.LINUX_REBOOT_CMD_POWER_OFF); err != nil {
		fmt.Printf("@@AVX512EMU-POWEROFF-FAILED %v@@\n", err)
	}
	// PID 1 must not exit (the kernel would panic); wait for the runner
	// to stop the emulator.
	for {
		time.Sleep(time.Hour)
	}
}

// run prepares the guest, runs the test binary and returns its exit status
// (125 when it could not be started, 128+n when a signal n killed it).
func run() int {
	mounts := []struct{ src, dir, fstype string }{
		{"proc", "/proc", "proc"},
		{"sysfs", "/sys", "sysfs"},
		{"devtmpfs", "/dev", "devtmpfs"},
		{"tmpfs", "/tmp", "tmpfs"},
	}
	for _, m := range mounts {
		if err := os.MkdirAll(m.dir, 0o755); err != nil {
			fmt.Printf("guestinit: mkdir %s: %v\n", m.dir, err)
			continue
		}
		if err := syscall.Mount(m.src, m.dir, m.fstype, 0, ""); err != nil {
			fmt.Printf("guestinit: mount %s on %s: %v\n", m.fstype, m.dir, err)
		}
	}
	uptime, _ := os.ReadFile("/proc/uptime")
	fmt.Printf("@@AVX512EMU-START uptime=%s cpu=%q flags=%s@@\n",
		strings.Fields(string(uptime) + " ?")[0], cpuModel(), avx512Flags())

	raw, err := os.ReadFile(argsFile)
	if err != nil {
		fmt.Printf("guestinit: %v\n", err)
		return 125
	}
	var args []string
	for _, a := range bytes.Split(raw, []byte{0}) {
		if len(a) > 0 {
			args = append(args, string(a))
		}
	}
	cmd := exec.Command(testBinary, args...)
	cmd.Dir = workDir
	cmd.Stdin = nil
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stdout
	cmd.Env = []string{
		"PATH=/harness",
		"HOME=/tmp",
		"TMPDIR=/tmp",
		"GOTRACEBACK=all",
	}
	err = cmd.Run()
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			fmt.Printf("guestinit: test binary killed by %v\n", ws.Signal())
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	fmt.Printf("guestinit: %v\n", err)
	return 125
}

// cpuModel returns the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// avx512Flags returns the avx512* and avx2 flags of /proc/cpuinfo, joined
// by commas ("none" when there are none).
func avx512Flags() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			var out []string
			for _, f := range strings.Fields(v) {
				if f == "avx2" || strings.HasPrefix(f, "avx512") {
					out = append(out, f)
				}
			}
			if len(out) == 0 {
				return "none"
			}
			return strings.Join(out, ",")
		}
	}
	return "none"
}
