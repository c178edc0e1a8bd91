# SPDX-License-Identifier: GPL-2.0
#
# User-facing targets.  The kernel build itself is described in Kbuild.
#
#   make deps                install what the project needs (Debian 12)
#   make [KVER=6.1|6.12|6.18|latest]
#                            build the modules for a Debian target kernel
#   make KDIR=<dir>          build against any kernel tree or headers
#   make vm CMD='...'        run a command in a VM booting the target kernel
#   make check               the whole test suite (deps, builds, unit tests,
#                            selftests in guests of 6.1, 6.12, 6.18, latest)
#   make check-debug        the three modules' selftests and long fuzz runs
#                            in a debug kernel (KASAN, lockdep, kmemleak,
#                            UBSAN...) built from linux-source-6.12
#   make check-experiments   the experiment harness's checks in the VM:
#                            the shapes (selftests/topology) and every
#                            experiment's short variant and its bounds
#                            (selftests/experiments); not in make check
#   make check-nodccp        selftests/tsm and flowgen in the VM with DCCP
#                            made unavailable, as on Linux 6.16 and later
#   make bench               TCP against TLTCP (and the congestion controls
#                            against CUBIC) on an unshaped veth pair, in
#                            the VM: throughput and CPU per GB at each end;
#                            BENCH_SECONDS=5 BENCH_REPEAT=3 by default;
#                            BENCH_ONLY=globs: only those rows ('diag*':
#                            the diagnostic rows, see lab/bench.py)
#   make bench-ab BASE=rev   two builds of tltcp against each other in the
#                            same rounds: BASE's (A) and the work tree's (B);
#                            BENCH_ONLY=globs picks the transports
#   make profile             perf in the VM: where the CPU time of TCP and
#                            TLTCP goes (PROFILE_MODULES=dir: another
#                            build of the modules)
#   make tools               build the user-space tools (tools/)
#   make checkpatch          checkpatch --strict over the module sources
#   make demo                the headline demo, in the VM
#   make experiment NAME=x   one experiment (experiments/x.toml) in
#                            the VM; SHORT=1 for its short variant, ONLY=globs
#                            to redo some of its runs
#   make experiments         all of them
#   make install             install the tools, their man pages and the
#                            bpftrace scripts (PREFIX=/usr/local, DESTDIR)
#   make modules_install     install the modules into the running system
#                            (with KDIR=/lib/modules/$(uname -r)/build)
#   make deb                 the Debian packages research-transports-dkms
#                            and research-transports-tools, in build/deb
#   make check-deploy        in the VM: the packages installed, used and
#                            purged (selftests/pkg), the bpftrace scripts
#                            during flows (selftests/bpftrace)

SHELL := /bin/bash
TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

# Which kernel: KDIR wins; otherwise KVER (a Debian target name such as
# 6.1 or 6.12, or a full release) resolved to an installed kernel.
ifneq ($(KDIR),)
KREL := $(shell cat $(KDIR)/include/config/kernel.release 2>/dev/null)
else
KVER ?= 6.1
KREL := $(shell $(TOP)/scripts/kver.sh $(KVER) 2>/dev/null)
# A kernel that scripts/kernels.sh unpacked (6.18, latest) has its headers
# in a chroot of the Debian release that built it, with that release's
# compiler and kbuild tools: the build runs there (scripts/kchroot.sh).
RT_KCACHE ?= /var/cache/research-transports
KROOT := $(if $(KREL),$(realpath $(RT_KCACHE)/kernels/$(KREL)/chroot))
ifneq ($(KROOT),)
KDIR := $(KROOT)/usr/src/linux-headers-$(KREL)
KMAKE := $(TOP)/scripts/kchroot.sh $(KROOT) make -C /usr/src/linux-headers-$(KREL)
else
KDIR := /lib/modules/$(KREL)/build
endif
endif
KMAKE ?= $(MAKE) -C $(KDIR)

BUILD := $(TOP)/build
KBUILD_DIR := $(BUILD)/$(KREL)
RESULTS ?= $(TOP)/results
# Module sources, mirrored as symlinks into a per-kernel build directory so
# that builds for several kernels never share object files.
MOD_SOURCES := Kbuild Kconfig net include

# The project's Python (scripts/deps.sh makes it): Debian's python3 in a
# virtual environment that holds virtme-ng; its bin first in PATH, so that
# vng and python3 are its own for every script make runs, on the host and,
# through lab/vm, in the guest.
RT_VENV ?= /opt/research-transports/venv
export RT_VENV
export PATH := $(RT_VENV)/bin:$(PATH)
PYTHON ?= $(if $(wildcard $(RT_VENV)/bin/python3),$(RT_VENV)/bin/python3,python3)
# The lab's programs are modules of the package lab/ (python3 -m lab.x).
export PYTHONPATH := $(TOP)$(if $(PYTHONPATH),:$(PYTHONPATH))
VM := $(PYTHON) -m lab.vm

.PHONY: all modules deps vm check unit selftests checkpatch demo install \
	clean kernel-ok ksft tools experiment experiments check-experiments \
	check-nodccp bench bench-ab profile check-debug modules_install man deb \
	uninstall check-deploy

TOOLS := tools/flowgen tools/tltcp_stream tools/tsm tools/tlbench

all: modules

kernel-ok:
	@if [ -z "$(KREL)" ] || [ ! -e "$(KDIR)/Makefile" ]; then \
		echo "No kernel build tree for KVER=$(KVER) KDIR=$(KDIR)." >&2; \
		echo "Run 'make deps' (Debian targets) or pass KDIR=<tree>." >&2; \
		exit 1; fi

modules: kernel-ok
	@for f in $(MOD_SOURCES); do d=$(KBUILD_DIR)/$$(dirname $$f); \
		mkdir -p $$d && cp -rsf $(TOP)/$$f $$d/ || exit 1; done
	@find $(KBUILD_DIR) -xtype l -delete
	$(KMAKE) M=$(KBUILD_DIR) modules
	@echo "modules for $(KREL): $$(cd $(KBUILD_DIR) && find . -name '*.ko' | sort | tr '\n' ' ')"

modules_install: modules
	$(MAKE) -C $(KDIR) M=$(KBUILD_DIR) modules_install
	depmod -a $(KREL)

# The tools as every C project installs them.  tsm finds libtsm_preload.so
# beside itself or in ../lib/research-transports.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib/research-transports
MANDIR ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share/research-transports
INSTALL ?= install
INSTALL_BINS := tools/flowgen/flowgen tools/tsm/tsm tools/tlbench/tlbench \
	tools/tltcp_stream/tltcp_stream_send tools/tltcp_stream/tltcp_stream_recv
# name section summary document
MAN_PAGES := \
	"flowgen 1|one flow of test traffic, measured|flowgen" \
	"tsm 1|the transport services middleware|tsm" \
	"tltcp_stream 1|an MPEG-like stream over time-lined TCP|tltcp_stream" \
	"tltcp 7|time-lined TCP, the tltcp upper-layer protocol|tltcp"
MAN_DIR := $(BUILD)/man

man:
	@mkdir -p $(MAN_DIR)
	@for m in $(MAN_PAGES); do IFS='|' read -r ns sum doc <<< "$$m"; \
		set -- $$ns; \
		$(TOP)/scripts/rst2man.sh $$1 $$2 "$$sum" \
			$(TOP)/Documentation/$$doc.rst $(MAN_DIR)/$$1.$$2 || exit 1; \
	done

install: tools man
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7 \
		$(DESTDIR)$(DATADIR)/bpftrace
	$(INSTALL) -m 0755 $(addprefix $(TOP)/,$(INSTALL_BINS)) $(DESTDIR)$(BINDIR)
	$(INSTALL) -m 0644 $(TOP)/tools/tsm/libtsm_preload.so $(DESTDIR)$(LIBDIR)
	$(INSTALL) -m 0644 $(MAN_DIR)/*.1 $(DESTDIR)$(MANDIR)/man1
	$(INSTALL) -m 0644 $(MAN_DIR)/*.7 $(DESTDIR)$(MANDIR)/man7
	for p in tltcp_stream_send tltcp_stream_recv; do \
		echo ".so man1/tltcp_stream.1" > $(DESTDIR)$(MANDIR)/man1/$$p.1; done
	$(if $(wildcard $(TOP)/tools/bpftrace/*.bt),$(INSTALL) -m 0755 \
		$(wildcard $(TOP)/tools/bpftrace/*.bt) $(DESTDIR)$(DATADIR)/bpftrace)

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(INSTALL_BINS)))
	rm -f $(DESTDIR)$(LIBDIR)/libtsm_preload.so
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,flowgen.1 tsm.1 \
		tltcp_stream.1 tltcp_stream_send.1 tltcp_stream_recv.1)
	rm -f $(DESTDIR)$(MANDIR)/man7/tltcp.7
	rm -rf $(DESTDIR)$(DATADIR)
	-rmdir $(DESTDIR)$(LIBDIR)

deb:
	@$(TOP)/scripts/mkdeb.sh $(BUILD)/deb

check-deploy: modules selftests deb
	@$(VM) --kernel $(KREL) --modules $(KBUILD_DIR) --results $(RESULTS) \
		--timeout 3600 -- \
		"make -s --no-print-directory -C selftests run_tests TARGETS='bpftrace pkg'"

deps:
	@$(TOP)/scripts/deps.sh

vm: modules selftests
	@if [ -z "$$CMD" ]; then echo "usage: make vm CMD='command'" >&2; exit 2; fi
	@$(VM) --kernel $(KREL) --modules $(KBUILD_DIR) --results $(RESULTS) -- "$$CMD"

# The kselftest framework files come from the linux-source-6.1 package.
ksft:
	@$(TOP)/scripts/ksft-extract.sh

tools:
	@for t in $(TOOLS); do $(MAKE) -s -C $(TOP)/$$t CFLAGS="-O2 -g $(if $(WERROR),-Werror)" || exit 1; done

selftests: ksft tools
	@$(MAKE) -s -C $(TOP)/selftests all KHDR_INCLUDES="-isystem $(TOP)/include/uapi"

unit:
	@$(PYTHON) -m lab.tests.run

checkpatch: ksft
	@$(TOP)/scripts/checkpatch.sh

# The guest does not inherit our environment: pass the demo's knobs.
DEMO_VARS := $(foreach v,DEMO_PARTS DEMO_SECONDS DEMO_RATE DEMO_DELAY DEMO_CC,$(if $($(v)),$(v)=$($(v))))

demo: modules selftests
	@$(VM) --kernel $(KREL) --modules $(KBUILD_DIR) --results $(RESULTS) -- \
		"$(DEMO_VARS) $(TOP)/lab/demo/run.sh"

EXPERIMENTS = $(basename $(notdir $(wildcard $(TOP)/experiments/*.toml)))
EXP_OUT = $(RESULTS)/$(NAME)$(if $(SHORT),-short)

experiment: modules selftests
	@if [ -z "$(NAME)" ]; then \
		echo "usage: make experiment NAME=<$(subst $(eval) ,|,$(EXPERIMENTS))> [SHORT=1]" >&2; \
		exit 2; fi
	@$(PYTHON) -m lab.experiment list --name $(NAME)
	@$(VM) --kernel $(KREL) --modules $(KBUILD_DIR) --results $(RESULTS) \
		--timeout 14400 -- "cd $(TOP) && $(PYTHON) -m lab.experiment run \
		$(NAME) $(if $(SHORT),--short) $(if $(ONLY),--only '$(ONLY)') \
		$(if $(DURATION),--duration $(DURATION)) --out $(EXP_OUT)"
	@echo "results: $(EXP_OUT)/README.md"

experiments:
	@for e in $(EXPERIMENTS); do $(MAKE) -s experiment NAME=$$e || exit 1; done

check:
	@$(TOP)/scripts/check.sh

# The three modules' selftests and the fuzzers, long, in a guest of a
# KASAN/lockdep/kmemleak/UBSAN kernel built from linux-source-6.12 (cached
# outside the tree): scripts/check-debug.sh.  Not part of make check.
check-debug:
	@$(TOP)/scripts/check-debug.sh

BENCH_SECONDS ?= 5
BENCH_REPEAT ?= 3

bench: modules selftests
	@mkdir -p $(RESULTS)
	@$(VM) --kernel $(KREL) --modules $(KBUILD_DIR) --results $(RESULTS) \
		--timeout 3600 -- "cd $(TOP) && $(PYTHON) -m lab.bench \
		--seconds $(BENCH_SECONDS) --repeat $(BENCH_REPEAT) \
		$(if $(filter command line,$(origin BENCH_ONLY)),\
		--only '$(BENCH_ONLY)') --json $(RESULTS)/bench-$(KREL).json"
	@echo "results: $(RESULTS)/bench-$(KREL).json"

# Two builds of the tltcp module in the same guest and the same rounds
# (lab.bench --ab): A is BASE's, exported with git archive and built in
# $(RESULTS)/bench-ab-base; B is the work tree's.  Every B row gives its
# per-round ratios to A.
BENCH_ONLY ?= tltcp MSG_TL 16 KiB
AB_BASE_DIR = $(RESULTS)/bench-ab-base

bench-ab: modules selftests
	@if [ -z "$(BASE)" ]; then \
		echo "usage: make bench-ab BASE=<commit> [BENCH_ONLY=globs]" >&2; \
		exit 2; fi
	@rm -rf $(AB_BASE_DIR) && mkdir -p $(AB_BASE_DIR)
	@git -C $(TOP) archive $(BASE) | tar -x -C $(AB_BASE_DIR)
	@$(MAKE) -s --no-print-directory -C $(AB_BASE_DIR) modules KVER=$(KVER) \
		$(if $(filter command line,$(origin KDIR)),KDIR=$(KDIR))
	@$(VM) --kernel $(KREL) --modules $(KBUILD_DIR) --results $(RESULTS) \
		--timeout 3600 -- "cd $(TOP) && $(PYTHON) -m lab.bench \
		--ab $(AB_BASE_DIR)/build/$(KREL)/net/tltcp/tltcp.ko \
		$(KBUILD_DIR)/net/tltcp/tltcp.ko --only '$(BENCH_ONLY)' \
		--seconds $(BENCH_SECONDS) --repeat $(BENCH_REPEAT) \
		--json $(RESULTS)/bench-ab-$(KREL).json"
	@echo "results: $(RESULTS)/bench-ab-$(KREL).json"

# perf in the guest: where the CPU time of TCP and TLTCP goes.
# PROFILE_MODULES: another build of the modules to profile (an older
# commit's build/<kernel>, for a before and after).
PROFILE_MODULES ?= $(KBUILD_DIR)

profile: modules selftests
	@mkdir -p $(RESULTS)
	@$(VM) --kernel $(KREL) --modules $(PROFILE_MODULES) \
		--results $(RESULTS) --timeout 1800 -- "cd $(TOP) && \
		$(PYTHON) -m lab.profile --seconds $(BENCH_SECONDS) \
		--json $(RESULTS)/profile-$(KREL).json"
	@echo "results: $(RESULTS)/profile-$(KREL).json"

check-experiments: modules selftests
	@$(VM) --kernel $(KREL) --modules $(KBUILD_DIR) --results $(RESULTS) \
		--timeout 3600 -- \
		"make -s --no-print-directory -C selftests run_tests TARGETS='topology experiments' ALL=1"

# What the middleware and flowgen do where the kernel has no DCCP, on a
# kernel that has it (selftests/without_dccp.sh; Documentation/tsm.rst,
# "Kernels").  About 9 minutes under TCG (515 s, 2026-11-25); not part
# of make check.
NODCCP_TARGETS ?= tsm flowgen
check-nodccp: modules selftests
	@$(VM) --kernel $(KREL) --modules $(KBUILD_DIR) --results $(RESULTS) \
		--timeout 1200 -- \
		"selftests/without_dccp.sh make -s --no-print-directory -C selftests run_tests TARGETS='$(NODCCP_TARGETS)'"

clean:
	rm -rf $(BUILD)
	@for t in $(TOOLS); do $(MAKE) -s -C $(TOP)/$$t clean; done
	@$(MAKE) -s -C $(TOP)/selftests clean 2>/dev/null || true
