# SPDX-License-Identifier: GPL-2.0
"""Run a command in a VM that boots a Debian kernel: an installed one
(/boot/vmlinuz-REL, /lib/modules/REL), or one that scripts/kernels.sh
unpacked below $RT_KCACHE/kernels/REL (6.18, latest).

The guest is a virtme-ng snapshot of this machine: it sees the host's file
system (read-only, with throwaway overlays on /etc, /lib, /usr, /var, /tmp),
so every host tool and this repository are there.  The results directory is
shared read-write.  The built modules are installed into the guest's
/lib/modules/<release>/extra, with module indexes (modules.dep, .alias...)
that the host's depmod made for the release's modules plus these: depmod
over all 4000 modules takes 30 s under TCG, 1 s natively.

KVM is used when it can boot the kernel, TCG otherwise.  On a PVM host
(kvm_pvm), stock kernels hang right after decompression under KVM, so the
first run on a machine probes KVM with a short boot and caches the verdict.

The run fails (exit 1, or the command's own non-zero status) when the guest
did not boot in time, the command timed out, the guest died, or the kernel
log shows a WARN/BUG/Oops/lockdep/refcount/KASAN/lockup report or a taint
other than O/E.  Otherwise the command's exit status is returned.
"""

import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from lab.vm import kmsg_scan

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME",
                                    os.path.expanduser("~/.cache")),
                     "research-transports")
KVM_PROBE_TIMEOUT = 45
KCACHE = os.environ.get("RT_KCACHE", "/var/cache/research-transports")


def log(msg):
    print(f"vm: {msg}", file=sys.stderr, flush=True)


def kvm_usable():
    """/dev/kvm exists and we may open it."""
    return os.access("/dev/kvm", os.R_OK | os.W_OK)


def kernel_paths(kernel):
    """(image, modules directory) of a kernel release: installed, or
    unpacked by scripts/kernels.sh (the image in boot/ or, from 7.x, beside
    the modules).  (None, None) when neither has it."""
    if os.path.exists(f"/boot/vmlinuz-{kernel}"):
        return f"/boot/vmlinuz-{kernel}", f"/lib/modules/{kernel}"
    root = os.path.join(KCACHE, "kernels", kernel)
    mods = os.path.join(root, "usr", "lib", "modules", kernel)
    if os.path.exists(os.path.join(root, ".ready")):
        for img in (os.path.join(root, "boot", f"vmlinuz-{kernel}"),
                    os.path.join(mods, "vmlinuz")):
            if os.path.exists(img):
                return img, mods
    return None, None


def venv_bin():
    """The bin directory of the virtual environment whose interpreter runs
    us (the project's, scripts/deps.sh), or None outside one."""
    if sys.prefix == sys.base_prefix:
        return None
    return os.path.join(sys.prefix, "bin")


def vng_path():
    """virtme-ng's vng: VM_VNG if set (a test's stand-in), our virtual
    environment's, else the first in PATH."""
    if os.environ.get("VM_VNG"):
        return os.environ["VM_VNG"]
    vbin = venv_bin()
    if vbin and os.access(os.path.join(vbin, "vng"), os.X_OK):
        return os.path.join(vbin, "vng")
    return shutil.which("vng")


def vng_cmd(kernel, accel, args):
    vmlinuz = args.image or kernel_paths(kernel)[0]
    cmd = [vng_path() or "vng", "--run", vmlinuz,
           "--cpus", str(args.cpus), "--memory", args.memory]
    if accel == "tcg":
        cmd.append("--disable-kvm")
    # The kernel's serial console, at warning level and above, goes to
    # vng's stderr (QEMU writes it itself, so it survives a guest that
    # dies before its log reaches the results directory); the command's
    # output has its own virtio port on stdout.
    cmd += ["--verbose", "--append", "loglevel=5"]
    for extra in args.append:
        cmd += ["--append", extra]
    return cmd


def probe_kvm(kernel, args):
    """Boot the kernel under KVM once; True if it ran a command."""
    cmd = vng_cmd(kernel, "kvm", args) + ["--exec", "echo kvm-probe-ok"]
    log(f"probing whether KVM boots {kernel} (up to {KVM_PROBE_TIMEOUT}s)")
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=KVM_PROBE_TIMEOUT)
        return b"kvm-probe-ok" in out
    except subprocess.TimeoutExpired:
        # vng's QEMU child hangs with the kernel: end the whole group.
        os.killpg(proc.pid, 9)
        proc.wait()
        return False


def choose_accel(kernel, args):
    if args.accel != "auto":
        return args.accel
    if not kvm_usable():
        return "tcg"
    if os.path.exists("/sys/module/kvm_pvm"):
        # PVM hosts hang stock kernels at boot (measured, see
        # Documentation/testing.rst): no need to wait for the probe.
        return "tcg"
    host = os.uname().release
    cache = os.path.join(CACHE, f"kvm-{host}-{kernel}")
    try:
        with open(cache) as f:
            return f.read().strip()
    except OSError:
        pass
    accel = "kvm" if probe_kvm(kernel, args) else "tcg"
    os.makedirs(CACHE, exist_ok=True)
    with open(cache, "w") as f:
        f.write(accel + "\n")
    log(f"KVM {'boots' if accel == 'kvm' else 'does not boot'} {kernel} "
        f"here: using {accel} (cached in {cache})")
    return accel


def read(path, default=None):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return default


def pump(stream, sink):
    """Copy the guest console to our stdout and a log file."""
    for line in iter(stream.readline, b""):
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
        sink.write(line)
    sink.close()


def module_indexes(kernel, kdir, modules, state):
    """Write into STATE/modindex the indexes of KERNEL's modules plus the
    .ko files under MODULES, as depmod on the host sees them through a
    tree of symlinks (KDIR: the kernel's own modules directory).  Returns
    the directory, or "" when depmod failed (the guest then runs depmod
    itself)."""
    base = os.path.join(state, "depmod")
    tree = os.path.join(base, "lib", "modules", kernel)
    out = os.path.join(state, "modindex")
    os.makedirs(os.path.join(tree, "extra"))
    for name in os.listdir(kdir):
        src = os.path.join(kdir, name)
        if name.startswith("modules."):
            if name.startswith(("modules.order", "modules.builtin")):
                shutil.copy(src, tree)
        elif name != "extra":
            os.symlink(src, os.path.join(tree, name))
    for root, _, files in os.walk(modules):
        for f in files:
            if f.endswith(".ko"):
                shutil.copy(os.path.join(root, f), os.path.join(tree, "extra"))
    depmod = shutil.which("depmod") or "/sbin/depmod"
    r = subprocess.run([depmod, "-b", base, kernel], capture_output=True,
                       text=True)
    if r.returncode != 0:
        log(f"host depmod failed, the guest will run it: {r.stderr.strip()}")
        shutil.rmtree(base, ignore_errors=True)
        return ""
    os.makedirs(out)
    for name in os.listdir(tree):
        if name.startswith("modules."):
            shutil.copy(os.path.join(tree, name), out)
    shutil.rmtree(base, ignore_errors=True)
    return out


def _state_dir(args):
    """(results, state): the results directory, and a fresh state
    directory below it that holds the command to run."""
    results = os.path.abspath(args.results)
    os.makedirs(results, exist_ok=True)
    vmdir = os.path.join(results, ".vm")
    os.makedirs(vmdir, exist_ok=True)
    state = tempfile.mkdtemp(prefix="run-", dir=vmdir)
    # One argument is a shell script; several are a command and its args.
    if len(args.command) == 1:
        command = args.command[0]
    else:
        command = " ".join(shlex.quote(a) for a in args.command)
    # The guest runs the interpreter we run in: our virtual environment
    # (in /opt, which the guest sees) first in its PATH.
    vbin = venv_bin()
    path = f"export PATH={shlex.quote(vbin)}:$PATH\n" if vbin else ""
    with open(os.path.join(state, "cmd"), "w") as f:
        f.write(f"{path}cd {shlex.quote(os.getcwd())} || exit 1\n"
                f"{command}\n")
    return results, state


def _start(cmd, state):
    """Start vng: its standard output (the command's) to our standard
    output and state/console, the kernel console to state/kconsole."""
    console = open(os.path.join(state, "console"), "wb")
    # VM_VERBOSE=1 shows the kernel console among the command's output.
    kconsole = (subprocess.STDOUT if os.environ.get("VM_VERBOSE") == "1"
                else open(os.path.join(state, "kconsole"), "wb"))
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=kconsole,
                            start_new_session=True)
    if kconsole is not subprocess.STDOUT:
        kconsole.close()
    pumper = threading.Thread(target=pump, args=(proc.stdout, console),
                              daemon=True)
    pumper.start()
    return proc, pumper


def _wait(proc, state, args, start):
    """Wait for the guest: (seconds until it booted or None, why it
    failed or None)."""
    booted = None
    failure = None
    deadline = start + args.boot_timeout
    try:
        while proc.poll() is None:
            now = time.monotonic()
            if booted is None and os.path.exists(os.path.join(state,
                                                              "booted")):
                booted = now - start
                # The guest enforces the command timeout; this is the
                # backstop.
                deadline = now + args.timeout + 60
            if now > deadline:
                failure = ("guest did not boot within %ds" % args.boot_timeout
                           if booted is None else
                           "guest did not finish within %ds"
                           % (args.timeout + 60))
                break
            time.sleep(0.2)
    finally:
        # Timed out, interrupted or terminated: QEMU must not outlive us.
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
        proc.wait()
    # A short command can start and end between two looks.
    if booted is None and os.path.exists(os.path.join(state, "booted")):
        booted = time.monotonic() - start
    return booted, failure


def _problems(state, status):
    """What the guest's kernel log (or, if it died, its consoles) shows."""
    kmsg = read(os.path.join(state, "dmesg")) or \
        read(os.path.join(state, "kmsg"), "")
    taint = read(os.path.join(state, "taint"))
    problems = kmsg_scan.scan(kmsg, int(taint) if taint else None)
    # A guest that died leaves its last words only on the consoles.
    if status is None:
        for name in ("kconsole", "console"):
            problems += kmsg_scan.scan(read(os.path.join(state, name), ""))
    return problems


def _report(state, problems, failure):
    """Say what went wrong: the reports found, then the log around the
    first (its call trace names the code: a CI log may be all there is
    of a guest that died), or the end of the console."""
    if problems:
        log("guest kernel log shows problems:")
        for p in problems:
            print(f"vm:   {p}", file=sys.stderr)
    if failure:
        log(failure)
        text = read(os.path.join(state, "kconsole"), "")
    elif problems:
        text = read(os.path.join(state, "dmesg")) or \
            read(os.path.join(state, "kmsg"), "")
    else:
        return
    lines = kmsg_scan.excerpt(text)
    if not lines:
        return
    if kmsg_scan.scan_lines(lines):
        log("the guest kernel's log from its first report:")
    else:
        log("last lines of the guest kernel's "
            f"{'console' if failure else 'log'}:")
    for line in lines:
        print(f"vm:   {line}", file=sys.stderr)


# virtme-ng takes --rodir/--rwdir paths of these characters only.
_VNG_PATH = re.compile(r"[a-zA-Z0-9_+ /.-]+")


def mountable(path):
    """@path, or its nearest ancestor that virtme-ng accepts to mount (the
    debug kernel's cache directory holds a Debian version: '1~deb12u1')."""
    while path != "/" and not _VNG_PATH.fullmatch(path):
        path = os.path.dirname(path)
    return path


def run(args):
    kernel = args.kernel
    if args.image and not os.path.exists(args.image):
        log(f"{args.image} not found")
        return 1
    vmlinuz, kdir = kernel_paths(kernel)
    if not args.image and vmlinuz is None:
        log(f"kernel {kernel}: neither /boot/vmlinuz-{kernel} nor "
            f"{KCACHE}/kernels/{kernel}: run 'make deps'")
        return 1
    if not vng_path():
        log("vng (virtme-ng) not found: run 'make deps'")
        return 1

    results, state = _state_dir(args)
    accel = choose_accel(kernel, args)
    moddir = os.path.abspath(args.modules) if args.modules else ""
    kmods = os.path.abspath(args.kmods) if args.kmods else ""
    # A kernel given by --image/--kmods has no host indexes: the guest
    # runs depmod over its (few) modules.
    modindex = module_indexes(kernel, kdir, moddir, state) \
        if moddir and not kmods else ""
    guest = [os.path.join(HERE, "guest.sh"), state, moddir,
             str(args.timeout), modindex, kmods]
    cmd = vng_cmd(kernel, accel, args) + ["--rwdir", results]
    # virtme's init hides the host's /var/cache under a tmpfs: a kernel
    # unpacked there (scripts/kernels.sh), or the modules of one built
    # there (make check-debug's), needs its own read-only mount for the
    # guest to find its modules.
    for d in (kdir, kmods):
        if d and (d.startswith(KCACHE + os.sep) or
                  d.startswith("/var/cache/")):
            cmd += [f"--rodir={mountable(d)}"]
    cmd += ["--exec", " ".join(shlex.quote(a) for a in guest)]
    log(f"booting {kernel} ({accel}), results in {results}")

    for attempt in (1, 2):
        start = time.monotonic()
        proc, pumper = _start(cmd, state)
        booted, failure = _wait(proc, state, args, start)
        pumper.join(timeout=5)
        total = time.monotonic() - start
        if booted is not None or failure is not None or attempt == 2:
            break
        # The kernel died before our command (and any of this project's
        # modules) ran: under TCG the 6.18 kernel has been seen to oops
        # on a stale int3 of its own boot-time code patching.  One more
        # boot, said out loud; its console stays for whoever looks.
        died = kmsg_scan.scan(read(os.path.join(state, "kconsole"), ""))
        log(f"the guest's kernel died during boot, before the command "
            f"({died[0] if died else 'no oops in its console'}); "
            f"booting once more")
        if os.path.exists(os.path.join(state, "kconsole")):
            os.replace(os.path.join(state, "kconsole"),
                       os.path.join(state, "kconsole.boot1"))

    status = read(os.path.join(state, "status"))
    if failure is None and status is None:
        failure = f"guest ended without a status (vng exit {proc.returncode})"
    rc = int(status) if status is not None and status.strip() else 1
    problems = _problems(state, status)

    boot_s = f"{booted:.1f}s" if booted is not None else "-"
    log(f"{kernel} {accel}: boot {boot_s}, total {total:.1f}s, "
        f"exit {rc if status is not None else '-'}")
    _report(state, problems, failure)
    if problems or failure:
        log(f"guest state kept in {state}")
        return rc if rc != 0 else 1
    if not args.keep:
        shutil.rmtree(state, ignore_errors=True)
    return rc


def main():
    # SIGTERM (an outer timeout) unwinds like Ctrl-C, through run()'s
    # cleanup of the QEMU process group.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    ap = argparse.ArgumentParser(
        prog="python3 -m lab.vm",
        description="Run a command in a VM booting a Debian kernel.")
    ap.add_argument("--kernel", required=True,
                    help="kernel release, e.g. 6.1.0-56-amd64")
    ap.add_argument("--modules", help="directory with the .ko files to "
                    "install in the guest")
    ap.add_argument("--image", help="boot this kernel image instead of "
                    "/boot/vmlinuz-KERNEL (a kernel that is not installed, "
                    "e.g. make check-debug's)")
    ap.add_argument("--kmods", help="with --image: the root its modules "
                    "were installed into (make modules_install "
                    "INSTALL_MOD_PATH=...), holding lib/modules/KERNEL")
    ap.add_argument("--results", default="results",
                    help="directory shared read-write with the guest")
    ap.add_argument("--accel", choices=["auto", "kvm", "tcg"],
                    default=os.environ.get("VM_ACCEL", "auto"))
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--memory", default="2G")
    ap.add_argument("--boot-timeout", type=int,
                    default=int(os.environ.get("VM_BOOT_TIMEOUT", 120)),
                    help="seconds until the guest must run the command")
    ap.add_argument("--timeout", type=int,
                    default=int(os.environ.get("VM_TIMEOUT", 3600)),
                    help="seconds the command may run")
    ap.add_argument("--append", action="append", default=[],
                    help="one more kernel command-line argument (repeat "
                    "for several)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the guest's state directory (logs)")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]
    if not args.command:
        ap.error("no command given")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
