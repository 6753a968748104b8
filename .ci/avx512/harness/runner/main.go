// Command runner boots a Go test binary in the Bochs emulator and reports
// its result; emulate.sh builds the pieces and calls it.
//
//	runner -kernel vmlinuz -init guestinit -test pkg.test \
//	    -pkgdir DIR -work DIR [-cpu tigerlake] [-timeout 30m] -- [test flags]
//
// It writes an initramfs (cpio, newc) holding guestinit as /init, the test
// binary, its arguments and the package's testdata/, puts it with the
// kernel on a bootable ISO (isolinux, xorriso), starts bochs with a
// bochsrc written for it, streams the test's output from the emulated
// serial port, and exits with the test's exit status. A boot failure or
// an emulator that stops early exits 125, a timeout 124; in both cases the
// end of the serial log and of Bochs's log is printed. The emulator is
// always stopped before runner returns.
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	exitTimeout = 124
	exitHarness = 125
)

var (
	kernel   = flag.String("kernel", "", "Linux kernel image (bzImage)")
	initBin  = flag.String("init", "", "static guestinit binary, installed as /init")
	isolinux = flag.String("isolinux", "/usr/lib/ISOLINUX/isolinux.bin", "isolinux.bin (package isolinux)")
	ldlinux  = flag.String("ldlinux", "/usr/lib/syslinux/modules/bios/ldlinux.c32", "ldlinux.c32 (package syslinux-common)")
	testBin  = flag.String("test", "", "test binary to run in the guest")
	pkgDir   = flag.String("pkgdir", "", "package directory; its testdata/ is copied into the guest")
	work     = flag.String("work", "", "scratch directory for the ISO, bochsrc and logs")
	cpuModel = flag.String("cpu", "corei7_skylake_x", "Bochs CPU model (bochs --help cpu lists them)")
	megs     = flag.Int("megs", 1024, "guest memory in MiB")
	timeout  = flag.Duration("timeout", 30*time.Minute, "wall-clock limit for boot and test together")
	bootMax  = flag.Duration("boot-timeout", 5*time.Minute, "wall-clock limit for the boot, up to the test's start")
	compress = flag.Bool("gzip", false, "gzip the initramfs (smaller ISO, slower guest boot)")
	verbose  = flag.Bool("v", false, "print the kernel's boot messages too")
	appendK  = flag.String("append", "", "more kernel command-line options")
	bochsBin = flag.String("bochs", "bochs-bin", "Bochs executable")
	isolate  = flag.Bool("isolate", true, "run Bochs in a network namespace of its own (unshare -rn) where that works")
	romDir   = flag.String("roms", "/usr/share/bochs", "directory with BIOS-bochs-latest and VGABIOS-lgpl-latest")
)

func main() {
	flag.Parse()
	os.Exit(run(flag.Args()))
}

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "avx512 emulator: "+format+"\n", args...)
	return exitHarness
}

func run(testArgs []string) int {
	for name, v := range map[string]string{"kernel": *kernel, "init": *initBin, "test": *testBin, "work": *work} {
		if v == "" {
			return fail("-%s is required", name)
		}
	}
	t0 := time.Now()
	if err := os.MkdirAll(*work, 0o755); err != nil {
		return fail("%v", err)
	}
	iso, err := buildISO(testArgs)
	if err != nil {
		return fail("building the boot ISO: %v", err)
	}
	serial := filepath.Join(*work, "serial.txt")
	bochsLog := filepath.Join(*work, "bochs.log")
	rc := filepath.Join(*work, "bochsrc")
	_ = os.Remove(serial)
	if err := os.WriteFile(rc, []byte(bochsrc(iso, serial, bochsLog)), 0o644); err != nil {
		return fail("%v", err)
	}
	prep := time.Since(t0)

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	stdout, err := os.Create(filepath.Join(*work, "bochs.stdout"))
	if err != nil {
		return fail("%v", err)
	}
	defer stdout.Close()
	// Debian builds Bochs with its debugger, which stops before the
	// first instruction; the command file tells it to continue.
	dbg := filepath.Join(*work, "debugger.rc")
	if err := os.WriteFile(dbg, []byte("continue\n"), 0o644); err != nil {
		return fail("%v", err)
	}
	argv := []string{*bochsBin, "-q", "-f", rc, "-rc", dbg}
	if *isolate && exec.Command("unshare", "-rn", "true").Run() == nil {
		// Bochs's rfb display listens on a TCP port; in a network
		// namespace of its own nothing outside can reach it.
		argv = append([]string{"unshare", "-rn"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = *work
	cmd.Stdin = nil
	cmd.Stdout = stdout
	cmd.Stderr = stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return fail("starting %s: %v", *bochsBin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
	defer stop()

	var (
		boot, testTime time.Duration
		booted         bool
		pending        []byte // serial bytes not yet split into lines
		kernelLog      bytes.Buffer
		lastLines      []string
		status         = -1
		offset         int64
	)
	exitRe := regexp.MustCompile(`@@AVX512EMU-EXIT (-?\d+)@@`)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	bootDeadline := time.After(*bootMax)
	var early error
	earlyExit := false

	readSerial := func() {
		f, err := os.Open(serial)
		if err != nil {
			return
		}
		defer f.Close()
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return
		}
		b, _ := io.ReadAll(f)
		offset += int64(len(b))
		pending = append(pending, b...)
		for {
			i := bytes.IndexByte(pending, '\n')
			if i < 0 {
				break
			}
			line := strings.TrimRight(string(pending[:i]), "\r")
			pending = pending[i+1:]
			lastLines = append(lastLines, line)
			if len(lastLines) > 60 {
				lastLines = lastLines[1:]
			}
			switch {
			case strings.Contains(line, "@@AVX512EMU-START"):
				booted = true
				boot = time.Since(start)
				fmt.Fprintf(out, "avx512 emulator: booted in %.1fs (%s)\n", boot.Seconds(),
					strings.TrimSuffix(line[strings.Index(line, "@@AVX512EMU-START")+len("@@AVX512EMU-START "):], "@@"))
			case exitRe.MatchString(line):
				m := exitRe.FindStringSubmatch(line)
				status, _ = strconv.Atoi(m[1])
				testTime = time.Since(start) - boot
			case !booted:
				kernelLog.WriteString(line + "\n")
				if *verbose {
					fmt.Fprintln(out, line)
				}
			default:
				fmt.Fprintln(out, line)
			}
		}
		out.Flush()
	}

loop:
	for status < 0 {
		select {
		case <-ticker.C:
			readSerial()
		case <-bootDeadline:
			readSerial()
			if !booted {
				stop()
				printTails(out, kernelLog.String(), bochsLog)
				fmt.Fprintf(out, "avx512 emulator: FAIL: the guest did not start the test within %v (boot timeout)\n", *bootMax)
				return exitTimeout
			}
		case <-ctx.Done():
			readSerial()
			if status >= 0 {
				break loop
			}
			stop()
			printTails(out, strings.Join(lastLines, "\n"), bochsLog)
			fmt.Fprintf(out, "avx512 emulator: FAIL: timeout after %v (booted: %v)\n", *timeout, booted)
			return exitTimeout
		case s := <-sigs:
			stop()
			fmt.Fprintf(out, "avx512 emulator: stopped by %v\n", s)
			return exitHarness
		case early = <-exited:
			stopped = true
			earlyExit = true
			readSerial()
			break loop
		}
	}
	if status < 0 {
		if len(pending) > 0 {
			lastLines = append(lastLines, string(pending))
		}
		printTails(out, strings.Join(lastLines, "\n"), bochsLog)
		fmt.Fprintf(out, "avx512 emulator: FAIL: bochs exited (%v) before the test finished (booted: %v)\n", early, booted)
		return exitHarness
	}
	// The guest powers off through ACPI; give Bochs a moment to exit on
	// its own, then stop it.
	poweredOff := earlyExit
	if !poweredOff {
		select {
		case <-exited:
			stopped = true
			poweredOff = true
		case <-time.After(3 * time.Second):
		}
	}
	stop()
	// Bochs's own CPU time tells the emulator's speed apart from the
	// load of the host, which changes the wall-clock times.
	var bochsCPU time.Duration
	if ps := cmd.ProcessState; ps != nil {
		bochsCPU = ps.UserTime() + ps.SystemTime()
	}
	fmt.Fprintf(out, "avx512 emulator: cpu=%s exit=%d prepare=%.1fs boot=%.1fs test=%.1fs total=%.1fs bochs-cpu-time=%.1fs (bochs exited on power-off: %v)\n",
		*cpuModel, status, prep.Seconds(), boot.Seconds(), testTime.Seconds(), time.Since(t0).Seconds(), bochsCPU.Seconds(), poweredOff)
	return status
}

// printTails prints the end of the serial log and of Bochs's own log.
func printTails(w io.Writer, serial, bochsLog string) {
	fmt.Fprintf(w, "---- serial console (last lines) ----\n%s\n", tail(serial, 40))
	b, _ := os.ReadFile(bochsLog)
	fmt.Fprintf(w, "---- %s (last lines) ----\n%s\n", bochsLog, tail(string(b), 20))
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// buildISO writes the initramfs and a bootable ISO into *work and returns
// the ISO's path.
func buildISO(testArgs []string) (string, error) {
	root := filepath.Join(*work, "iso")
	if err := os.RemoveAll(root); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(root, "isolinux"), 0o755); err != nil {
		return "", err
	}
	for _, f := range []string{*isolinux, *ldlinux} {
		if err := copyFile(f, filepath.Join(root, "isolinux", filepath.Base(f))); err != nil {
			return "", err
		}
	}
	if err := copyFile(*kernel, filepath.Join(root, "vmlinuz")); err != nil {
		return "", err
	}
	cfg := "DEFAULT linux\nPROMPT 0\nTIMEOUT 0\nLABEL linux\n  KERNEL /vmlinuz\n  APPEND " + cmdline() + "\n"
	if err := os.WriteFile(filepath.Join(root, "isolinux", "isolinux.cfg"), []byte(cfg), 0o644); err != nil {
		return "", err
	}
	if err := writeInitramfs(filepath.Join(root, "initrd.img"), testArgs); err != nil {
		return "", err
	}
	iso := filepath.Join(*work, "boot.iso")
	_ = os.Remove(iso)
	cmd := exec.Command("xorriso", "-as", "mkisofs", "-quiet", "-o", iso,
		"-b", "isolinux/isolinux.bin", "-c", "isolinux/boot.cat",
		"-no-emul-boot", "-boot-load-size", "4", "-boot-info-table", root)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("xorriso: %v\n%s", err, out)
	}
	return iso, nil
}

// cmdline is the kernel command line. The serial port is the console.
//
// clearcpuid: Bochs 2.7 reports XSAVE state sizes that do not match its
// layout when PKRU or the compacted format (XSAVEC, XSAVES) is in use, and
// the kernel then turns XSAVE off altogether, which hides AVX and AVX-512
// from user space. Without those three the kernel uses the standard
// format with x87, SSE, AVX, opmask and ZMM state (XCR0 = 0xe7). With
// FSRM (tigerlake) the boot hangs early in an endless loop of page faults
// under Bochs; without it the kernel keeps its plain memcpy/memmove, which
// it otherwise patches to REP MOVSB. User space still sees the CPU's own
// CPUID.
func cmdline() string {
	return strings.Join([]string{
		"initrd=/initrd.img",
		"console=ttyS0,115200",
		"rdinit=/init",
		"panic=-1",
		"loglevel=4",
		"mitigations=off",
		"tsc=reliable",
		"no_timer_check",
		"random.trust_cpu=on",
		"clearcpuid=pku,xsavec,xsaves,fsrm",
		*appendK,
	}, " ")
}

// writeInitramfs writes the cpio archive of the guest's root file system.
func writeInitramfs(path string, testArgs []string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	var w io.Writer = bw
	var zw *gzip.Writer
	if *compress {
		zw, _ = gzip.NewWriterLevel(bw, gzip.BestSpeed)
		w = zw
	}
	c := &cpioWriter{w: w}
	for _, d := range []string{"dev", "proc", "sys", "tmp", "harness", "harness/pkg"} {
		c.Dir(d)
	}
	c.CharDev("dev/console", 5, 1)
	c.CharDev("dev/ttyS0", 4, 64)
	c.CharDev("dev/null", 1, 3)
	c.HostFile("init", *initBin)
	c.HostFile("harness/pkg.test", *testBin)
	var args bytes.Buffer
	for _, a := range testArgs {
		args.WriteString(a)
		args.WriteByte(0)
	}
	c.File("harness/args", 0o644, args.Bytes())
	if *pkgDir != "" {
		td := filepath.Join(*pkgDir, "testdata")
		if fi, err := os.Stat(td); err == nil && fi.IsDir() {
			c.Tree("harness/pkg/testdata", td)
		}
	}
	if err := c.Close(); err != nil {
		return err
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// bochsrc returns the Bochs configuration: one CPU of the chosen model,
// no display, the ISO as the boot CD-ROM, COM1 written to serial.
func bochsrc(iso, serial, log string) string {
	return fmt.Sprintf(`# Written by .ci/avx512 runner.
config_interface: textconfig
display_library: rfb, options="timeout=0"
megs: %d
romimage: file=%s/BIOS-bochs-latest
vgaromimage: file=%s/VGABIOS-lgpl-latest
cpu: model=%s, count=1, ips=200000000, reset_on_triple_fault=0
clock: sync=none, time0=utc
pci: enabled=1, chipset=i440fx
ata0: enabled=1, ioaddr1=0x1f0, ioaddr2=0x3f0, irq=14
ata0-master: type=cdrom, path="%s", status=inserted
boot: cdrom
floppy_bootsig_check: disabled=1
com1: enabled=1, mode=file, dev="%s"
mouse: enabled=0
log: "%s"
panic: action=fatal
error: action=report
info: action=report
debug: action=ignore
`, *megs, *romDir, *romDir, *cpuModel, iso, serial, log)
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}
