# Bronze. `make run` builds the image and boots a node under QEMU; `make test` runs every test
# (unit, integration, and end-to-end boots of the real image, amd64 and arm64). Both install
# what they need. ARCH=arm64 builds (and runs) the arm64 image on this x86_64 host.
ARCH ?= amd64
ARCHES := amd64 arm64
ifeq ($(filter $(ARCH),$(ARCHES)),)
$(error ARCH=$(ARCH) is not one of: $(ARCHES))
endif
OUT := _out
A := $(OUT)/$(ARCH)
B := $(OUT)/build/$(ARCH)
SHELL := /bin/bash
# The project's tools and its pinned Node runtime (node_modules/.bin/node) come first.
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)

FORCE:
.PHONY: all deps kernel image test-images sign verify run stop test test-unit test-e2e typecheck wire-types bench bench-lifecycle bench-memory bench-fanout bench-cluster bench-verity bench-load bench-codecs bench-api-load boot-functions clean

all: image

deps:
	@scripts/deps.sh

# kernel.sh copies the cached kernel out every time: it writes to a staging directory, and a
# file whose bytes did not change keeps its time in $(A), so that a second `make image` (or
# `make run`) rebuilds nothing that depends on the kernel or its command line. The kernel's
# default command line is $(A)/kernel.cmdline (kernel.sh's `cmdline`); $(A)/cmdline, below,
# is the full one, with the rootfs's root hash.
kernel: deps
	@mkdir -p $(B)/kernel $(A)
	@image-builder/kernel.sh $(ARCH) $(B)/kernel
	@for f in vmlinuz:vmlinuz kernel.config:kernel.config cmdline:kernel.cmdline; do \
	  cmp -s $(B)/kernel/$${f%%:*} $(A)/$${f#*:} || cp $(B)/kernel/$${f%%:*} $(A)/$${f#*:}; done
	@tsx image-builder/kspp-check.ts --config $(A)/kernel.config --cmdline $(A)/kernel.cmdline --arch $(ARCH) > $(A)/kspp-report.txt \
	  || { cat $(A)/kspp-report.txt; echo 'KSPP check failed: see the MISS lines above'; exit 1; }
	@tail -n 1 $(A)/kspp-report.txt

# The TypeScript types of the messages in protos/ (src/contract/wire/), generated from the protos
# before the type check and the bundle; a unit test fails when the committed ones are stale.
wire-types: deps
	@tsx image-builder/wire-types.ts

# Always re-bundled (a second or two): the commit id is stamped in, so the files change with it.
# One bundle per role plus the main script that picks one; SHA256SUMS changes with any of them.
$(OUT)/build/roles/SHA256SUMS: FORCE
	@tsx image-builder/wire-types.ts
	@image-builder/bundle.sh --roles $(OUT)/build/roles

# The lock file that pins the arch's Node runtime (amd64's is the project's own).
RUNTIME_LOCK_amd64 := package-lock.json
RUNTIME_LOCK_arm64 := runtimes/arm64/package-lock.json

$(B)/bronze: $(OUT)/build/roles/SHA256SUMS image-builder/sea.sh image-builder/code-cache.ts image-builder/arch.sh $(RUNTIME_LOCK_$(ARCH)) $(wildcard image-builder/boot-functions/*.txt)
	@image-builder/sea.sh $(ARCH) $(OUT)/build/roles $@

# GRUB for installed disks (BIOS and UEFI), built once and copied onto every disk: by disk.sh
# and, from the rootfs, by machined's installer. Needs the kernel's command line for grub.cfg
# (without a root hash: GRUB adds each slot's).
$(A)/bootloader/boot-uuid: $(A)/kernel.cmdline image-builder/bootloader.sh image-builder/layout.sh image-builder/grub/disk.cfg image-builder/secureboot-keys.sh package.json
	@image-builder/bootloader.sh $(ARCH) $(A) $(A)/bootloader

# rootfs.sqsh carries its dm-verity hash tree after the squashfs (image-builder/verity.sh);
# $(A)/roothash is the root hash every boot path puts on the command line (bronze.roothash=).
$(A)/rootfs.sqsh: $(B)/bronze $(A)/bootloader/boot-uuid image-builder/rootfs.sh image-builder/prefetch-ranges.ts image-builder/verity.sh image-builder/env.sh image-builder/arch.sh $(shell find rootfs -type f)
	@mkdir -p $(A)
	@image-builder/rootfs.sh $(ARCH) $< $@ $(A)/bootloader
	@image-builder/verity.sh $@ $(A)/roothash

# The full kernel command line of this build, as a direct kernel boot (`make run`, PXE) gives it:
# the kernel's default and bronze.roothash= (image-builder/cmdline.sh). The ISO, PXE, the UKI
# and `make run` boot with it (the roothash file's hash wins over one in it); the installed
# disks' GRUB takes kernel.cmdline, since each slot adds its own root hash.
$(A)/cmdline: $(A)/kernel.cmdline $(A)/rootfs.sqsh image-builder/cmdline.sh
	@image-builder/cmdline.sh $(A)/kernel.cmdline $(A)/roothash > $@.tmp && mv $@.tmp $@

$(A)/initramfs.xz: $(A)/rootfs.sqsh image-builder/preinit/preinit.c image-builder/initramfs.sh image-builder/arch.sh
	@image-builder/initramfs.sh $(ARCH) $< $@

# The boot media, from the kernel and initramfs: a hybrid ISO (BIOS and UEFI), a raw disk
# image (GPT, GRUB with A/B slots; needs root for loop devices) and the PXE assets.
$(A)/bronze.iso: $(A)/initramfs.xz $(A)/vmlinuz $(A)/cmdline image-builder/iso.sh image-builder/grub/iso.cfg
	@image-builder/iso.sh $(ARCH) $(A) $@

$(A)/disk.raw: $(A)/initramfs.xz $(A)/vmlinuz $(A)/bootloader/boot-uuid image-builder/disk.sh image-builder/layout.sh
	@image-builder/disk.sh $(ARCH) $(A) $@

$(A)/pxe/boot.ipxe: $(A)/initramfs.xz $(A)/vmlinuz $(A)/cmdline image-builder/pxe.sh
	@image-builder/pxe.sh $(ARCH) $(A) $(A)/pxe

# Secure Boot (amd64 UEFI): the signed UKI and an EFI system partition with signed systemd-boot
# that enrolls Bronze's keys into a firmware in setup mode (image-builder/uki.sh,
# secureboot-esp.sh). The keys are made at build time in _out/secureboot
# (image-builder/secureboot-keys.sh; BRONZE_SECUREBOOT_KEYS names another set).
$(A)/secureboot/bronze.efi: $(A)/initramfs.xz $(A)/vmlinuz $(A)/cmdline image-builder/uki.sh image-builder/secureboot-keys.sh rootfs/etc/os-release
	@mkdir -p $(dir $@)
	@image-builder/uki.sh $(ARCH) $(A) $@

$(A)/secureboot/esp.img: $(A)/secureboot/bronze.efi image-builder/secureboot-esp.sh
	@image-builder/secureboot-esp.sh $(ARCH) $< $@

# disk.raw with that ESP (slot A's UKI as bronze-a.efi), and the upgrade image that carries the
# signed UKI, which a node booted under Secure Boot needs (image-builder/secureboot-disk.sh).
$(A)/secureboot/disk.raw: $(A)/disk.raw $(A)/secureboot/bronze.efi image-builder/secureboot-disk.sh image-builder/secureboot-esp.sh
	@image-builder/secureboot-disk.sh $(ARCH) $(A)/disk.raw $(A)/secureboot/bronze.efi $@

$(A)/secureboot/upgrade.tar: $(A)/initramfs.xz $(A)/vmlinuz $(A)/secureboot/bronze.efi image-builder/upgrade.sh
	@image-builder/upgrade.sh $(ARCH) $(A) $@ $(A)/secureboot/bronze.efi

# Install media for Secure Boot: that ESP as the ISO's El Torito EFI image, and the files the
# installer copies (image-builder/secureboot-iso.sh).
$(A)/secureboot/bronze.iso: $(A)/secureboot/esp.img $(A)/secureboot/bronze.efi $(A)/initramfs.xz $(A)/vmlinuz image-builder/secureboot-iso.sh
	@image-builder/secureboot-iso.sh $(ARCH) $(A) $(A)/secureboot/bronze.efi $(A)/secureboot/esp.img $@

SECUREBOOT := $(if $(filter amd64,$(ARCH)),$(A)/secureboot/esp.img $(A)/secureboot/disk.raw $(A)/secureboot/upgrade.tar $(A)/secureboot/bronze.iso)

# The signed upgrade image for `bronzectl upgrade --image` (image-builder/upgrade.sh).
$(A)/upgrade.tar: $(A)/initramfs.xz $(A)/vmlinuz image-builder/upgrade.sh
	@image-builder/upgrade.sh $(ARCH) $(A) $@

# Upgrade images only the end-to-end tests use (another version; a broken one), not signed
# into SHA256SUMS and not shipped. arm64's end-to-end test upgrades to `next` only.
T := $(OUT)/test-images/$(ARCH)
TEST_IMAGES_amd64 := next broken
TEST_IMAGES_arm64 := next
$(T)/next/upgrade.tar: $(A)/initramfs.xz image-builder/test-images.sh test/fixtures/broken-machined.ts
	@image-builder/test-images.sh $(ARCH) $(A) $(T) $(TEST_IMAGES_$(ARCH))

test-images: image
	@$(MAKE) --no-print-directory $(T)/next/upgrade.tar

image: deps kernel
	@$(MAKE) --no-print-directory $(A)/initramfs.xz $(A)/cmdline
	@$(MAKE) --no-print-directory $(A)/bronze.iso $(A)/disk.raw $(A)/pxe/boot.ipxe $(A)/upgrade.tar $(SECUREBOOT)
	@image-builder/bronzectl.sh $(A) $(ARCH) >/dev/null && echo "bronzectl: $(A)/bronzectl (single executable, linux/$(ARCH)), $(A)/bronzectl.cjs (any Node >= 20)"
	@image-builder/sign.sh $(OUT)

verify:
	@image-builder/verify.sh $(OUT)

# Boots the image under QEMU (TCG), serial console on stdout, host port PORT (default 50000)
# forwarded to the node's :50000. Stop it with `make stop [PORT=...]` (ACPI power button:
# orderly shutdown) or ctrl-a x (immediate). Variables (image-builder/qemu.ts says more):
#   PORT=50001        the host port of the node's API; one node per port
#   DISK=node1.raw    boot the ISO with this file as the node's disk (/dev/vda), made blank
#                     (DISK_SIZE, default 6G) when missing; its writes persist. Once Bronze is
#                     installed there, the ISO boots the disk's current slot.
#   MEDIA=none        with DISK: boot the disk alone, no ISO
#   SNAPSHOT=1        with DISK: keep the disk's writes in a temporary overlay
#   APPEND="..."      extra kernel arguments (a boot without DISK)
#   UEFI=1            OVMF instead of SeaBIOS
PORT ?= 50000
QEMU_RUN_FLAGS = --arch $(ARCH) --port $(PORT) $(if $(DISK),--disk '$(DISK)') $(if $(DISK_SIZE),--disk-size $(DISK_SIZE)) \
  $(if $(filter none,$(MEDIA)),--no-media) $(if $(SNAPSHOT),--snapshot) $(if $(APPEND),--append '$(APPEND)') $(if $(UEFI),--uefi)
run: image
	@tsx image-builder/qemu.ts run $(QEMU_RUN_FLAGS)

stop:
	@tsx image-builder/qemu.ts stop --arch $(ARCH) --port $(PORT)

typecheck: deps wire-types
	@tsc -p tsconfig.json --noEmit

R := $(OUT)/test-results

test-unit: deps
	@mkdir -p $(R)
	@vitest run --project unit --reporter=default --reporter=json --outputFile.json=$(R)/unit.json

# Both architectures' images: the end-to-end tests boot each (test/e2e/arm64.test.ts, arm64's).
test-e2e:
	@for a in $(ARCHES); do $(MAKE) --no-print-directory test-images ARCH=$$a || exit 1; done
	@mkdir -p $(R)
	@vitest run --project e2e --reporter=default --reporter=json --outputFile.json=$(R)/e2e.json

# Every layer runs even when an earlier one failed; the closing line adds them up.
test: deps typecheck
	@rm -rf $(R); rc=0; \
	$(MAKE) --no-print-directory test-unit || rc=1; \
	$(MAKE) --no-print-directory test-e2e || rc=1; \
	node scripts/test-summary.mjs $(R)/unit.json $(R)/e2e.json || rc=1; \
	exit $$rc

# On demand, not part of the tests. bench/api.ts imports the protos, so it runs bundled.
bench-lifecycle: image test-images
	@tsx bench/lifecycle.ts

# The least memory that reaches Running within twice the 512 MiB time (docs/performance.md, Memory).
bench-memory: image
	@tsx bench/memory.ts

# Fan-out of `version` over 1, 10 and 50 simulated nodes (node processes on 127.0.0.x).
bench-fanout: deps
	@image-builder/bundle.sh bench/fanout.ts $(OUT)/build/bench-fanout.cjs >/dev/null && node $(OUT)/build/bench-fanout.cjs

# `cluster create` to healthy, 1 and 3 control planes (QEMU; root for the network namespace).
bench-cluster: image
	@tsx bench/cluster.ts

# dm-verity's cost at boot: the image against the same image mounted without verity (bench/verity.ts).
bench-verity: image
	@tsx bench/verity.ts

# Records the functions each role runs while a node boots (a QEMU boot of this build), for the
# next build's code caches: image-builder/boot-functions/<role>.txt (see
# src/lib/boot-functions.ts; none committed yet, docs/decisions/0022-boot-functions.md).
boot-functions: image
	@tsx image-builder/boot-functions.ts $(ARCH)

# Each role's bundle loading from its code cache under qemu-x86_64, one process at a time
# (BENCH_AGAINST_ROLES=<dir>: another build's _out/build/roles in the same interleaved runs).
bench-load: image
	@node --disable-warning=ExperimentalWarning bench/role-load.ts

# The first calls of the messages every boot exchanges, their functions written at build time
# against generated at first call, under qemu-x86_64 (bench/codecs.ts).
bench-codecs: deps
	@tsx bench/codecs.ts

# 200 concurrent mTLS clients against one node under QEMU for 10 minutes: Version, resource
# List and Watch, logs --follow; latency, errors and apid's and machined's memory (bench/api-load.ts).
bench-api-load: image
	@image-builder/bundle.sh bench/api-load.ts $(OUT)/build/bench-api-load.cjs >/dev/null && node $(OUT)/build/bench-api-load.cjs

bench: image
	@image-builder/bundle.sh bench/boot.ts $(OUT)/build/bench-boot.cjs >/dev/null && BENCH_ARCH=$(ARCH) node --no-deprecation $(OUT)/build/bench-boot.cjs
	@image-builder/bundle.sh bench/api.ts $(OUT)/build/bench-api.cjs >/dev/null && node $(OUT)/build/bench-api.cjs

clean:
	rm -rf $(OUT)
