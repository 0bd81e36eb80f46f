/*
 * Bronze preinit: the only C in the image. Node cannot run before a root filesystem with its
 * shared libraries exists, so this tiny static program runs as the initramfs's /init:
 *
 *   1. mounts devtmpfs on /dev and makes /dev/console fds 0, 1, 2;
 *   2. attaches /rootfs.sqsh read-only to a free loop device (LOOP_CONFIGURE);
 *   3. verifies it: rootfs.sqsh is the squashfs followed by its dm-verity hash tree (made by
 *      image-builder/verity.sh: a veritysetup superblock at the first 4 KiB boundary after the
 *      squashfs, then the tree). preinit reads the tree's parameters from that superblock, takes
 *      the root hash from the kernel argument bronze.roothash=<hex>, sets up a read-only verity
 *      target over the loop device through device-mapper ioctls (DM_DEV_CREATE, DM_TABLE_LOAD,
 *      DM_DEV_SUSPEND to resume) and reads the whole verified device once, so that a changed
 *      block anywhere stops the boot here, not when a file happens to be read;
 *   4. mounts the verified device (squashfs, ro) on /newroot, mounts a tmpfs on /newroot/run (handed over to
 *      machined, which needs a writable, executable place for its native module before it can
 *      mount anything itself) and one on /newroot/system (the sockets of the services machined
 *      starts before it has loaded), and moves /dev into the new root;
 *   5. switches root (move-mount the new root over /, chroot), starts a child that reads the
 *      binary ahead (prefetch, below), and execs /sbin/init.
 *
 * Any failure is printed with its cause and ends in a kernel panic (init exiting), which
 * reboots the machine; the bootloader's fallback takes over from there. There is no path that
 * mounts the root without verity: no root hash, a bad superblock or a mismatch all stop here.
 *
 * Why no root-hash signature (DM_VERITY_VERIFY_ROOTHASH_SIG): the root hash is trusted as far
 * as the command line is. Under Secure Boot the command line is part of the signed UKI (the
 * stub ignores any other), so it cannot point at another root; without Secure Boot whoever can
 * change the command line can change the kernel too, and a key in the kernel would not help.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/dm-ioctl.h>
#include <linux/loop.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define ROOTFS_IMAGE "/rootfs.sqsh"
#define NEWROOT "/newroot"
#define DM_NAME "bronze-root"
#define VERITY_BLOCK 4096

/* The kernel command line, read once from /proc/cmdline (read_cmdline). */
static char cmdline[4096];

static void say(const char *fmt, ...) {
  va_list ap;
  char buf[512];
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n >= sizeof buf) n = sizeof buf - 1;
  (void)!write(2, buf, (size_t)n);
}

static void record_failure(const char *why);

/* Every failure ends here: printed, recorded for the other slot (record_failure), then init
   exits, which panics the kernel; with panic=<seconds> the machine reboots. */
static void stop_boot(const char *why) {
  say("bronze preinit: FATAL: %s\n", why);
  record_failure(why);
  sleep(5);
  _exit(1);
}

static void die(const char *what) {
  char buf[400];
  snprintf(buf, sizeof buf, "%s: %s", what, strerror(errno));
  stop_boot(buf);
}

/* A failure without an errno worth printing. */
static void fail(const char *fmt, ...) {
  va_list ap;
  char buf[400];
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  stop_boot(buf);
}

static void setup_console(void) {
  int fd = open("/dev/console", O_RDWR | O_NOCTTY);
  if (fd < 0) return; /* nothing to print to; carry on */
  for (int i = 0; i < 3; i++)
    if (fcntl(i, F_GETFD) < 0 || i == fd) dup2(fd, i);
  if (fd > 2) close(fd);
}

static int attach_loop(const char *image) {
  int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
  if (ctl < 0) die("open /dev/loop-control");
  int backing = open(image, O_RDONLY | O_CLOEXEC);
  if (backing < 0) die("open " ROOTFS_IMAGE);
  for (int attempt = 0; attempt < 8; attempt++) {
    int n = ioctl(ctl, LOOP_CTL_GET_FREE);
    if (n < 0) die("LOOP_CTL_GET_FREE");
    char path[32];
    snprintf(path, sizeof path, "/dev/loop%d", n);
    int loop = open(path, O_RDONLY | O_CLOEXEC);
    if (loop < 0) die("open loop device");
    struct loop_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.fd = (unsigned)backing;
    cfg.info.lo_flags = LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR;
    strncpy((char *)cfg.info.lo_file_name, image, LO_NAME_SIZE - 1);
    if (ioctl(loop, LOOP_CONFIGURE, &cfg) == 0) {
      close(backing);
      close(ctl);
      say("bronze preinit: %s attached to %s\n", image, path);
      return loop; /* keep the fd open until mounted: AUTOCLEAR detaches when the last user goes */
    }
    if (errno != EBUSY) die("LOOP_CONFIGURE");
    close(loop); /* raced with someone else; take the next free one */
  }
  errno = EBUSY;
  die("no free loop device");
  return -1;
}


#ifdef BRONZE_BENCH_UNVERIFIED
/* The number of the loop device open as fd. */
static int loop_number(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) die("fstat the loop device");
  return (int)minor(st.st_rdev);
}
#endif

/* ---- the failure record --------------------------------------------------------------------- */

/*
 * A slot that cannot boot says why, where the slot GRUB falls back to will read it: one line in
 * <slot>/boot-failure on BOOT (the xfs partition GPT names "BOOT"; bronze.slot= on the command
 * line names the slot, or under systemd-boot, its LoaderEntrySelected variable). machined on the other slot puts it in BootStatus and removes the file.
 * Only a boot from a slot records anything (a kernel, ISO or PXE boot has no BOOT to write), and
 * the record is best effort: whatever happens here, the boot still stops.
 */
/*
 * The slot systemd-boot started, from its LoaderEntrySelected variable (4 bytes of attributes,
 * then the entry id in UTF-16LE): bronze-a.efi or bronze-b.efi, the UKIs a Secure Boot disk's
 * ESP holds (image-builder/secureboot-disk.sh). 0 when it is neither (or no EFI). /sys is mounted.
 */
#define EFIVARS "/sys/firmware/efi/efivars"
static char slot_from_systemd_boot(void) {
  if (mount("efivarfs", EFIVARS, "efivarfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, NULL) != 0 && errno != EBUSY) return 0;
  unsigned char v[4 + 2 * 64];
  int fd = open(EFIVARS "/LoaderEntrySelected-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read(fd, v, sizeof v);
  if (fd >= 0) close(fd);
  umount(EFIVARS);
  char id[64] = {0};
  for (ssize_t i = 4, j = 0; i + 1 < n && j < (ssize_t)sizeof id - 1 && (v[i] || v[i + 1]); i += 2, j++) id[j] = v[i + 1] ? '?' : (char)v[i];
  if (strncasecmp(id, "bronze-", 7) != 0 || strcasecmp(id + 8, ".efi") != 0) return 0;
  char slot = id[7] == 'a' || id[7] == 'A' ? 'A' : id[7] == 'b' || id[7] == 'B' ? 'B' : 0;
  return slot;
}

static void record_failure(const char *why) {
  static int recording;
  if (recording) return; /* a failure while recording: no second record */
  recording = 1;
  mkdir("/sys", 0555);
  if (mount("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0 && errno != EBUSY) return;
  /* GRUB names the slot on the command line; systemd-boot in an EFI variable. */
  char slot = 0;
  const char *p = strstr(cmdline, "bronze.slot=");
  if (p && (p == cmdline || p[-1] == ' ') && (p[12] == 'A' || p[12] == 'B') && (p[13] == ' ' || p[13] == '\n' || p[13] == 0)) slot = p[12];
  if (!slot) slot = slot_from_systemd_boot();
  if (!slot) return;
  /* The partitions named BOOT, by their uevent (DEVNAME=vda3 ... PARTNAME=BOOT). */
  DIR *blocks = opendir("/sys/class/block");
  if (!blocks) return;
  struct dirent *e;
  while ((e = readdir(blocks)) != NULL) {
    char path[300], ev[1024], dev[300] = {0};
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "/sys/class/block/%s/uevent", e->d_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t n = read(fd, ev, sizeof ev - 1);
    close(fd);
    if (n <= 0) continue;
    ev[n] = 0;
    if (strstr(ev, "\nPARTNAME=BOOT\n")) snprintf(dev, sizeof dev, "/dev/%s", e->d_name);
    if (!dev[0]) continue;
    mkdir("/boot", 0755);
    if (mount(dev, "/boot", "xfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
      say("bronze preinit: could not mount %s to record the failure: %s\n", dev, strerror(errno));
      continue;
    }
    char dir[16], tmp[48], file[48];
    snprintf(dir, sizeof dir, "/boot/%c", slot);
    snprintf(tmp, sizeof tmp, "/boot/%c/boot-failure.tmp", slot);
    snprintf(file, sizeof file, "/boot/%c/boot-failure", slot);
    struct stat st;
    int wrote = 0;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
      int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd >= 0) {
        size_t len = strlen(why);
        wrote = write(fd, why, len) == (ssize_t)len && write(fd, "\n", 1) == 1 && fsync(fd) == 0;
        close(fd);
        wrote = wrote && rename(tmp, file) == 0;
      }
    }
    umount("/boot");
    if (wrote) {
      say("bronze preinit: recorded the failure in %s/%c/boot-failure for the other slot\n", dev, slot);
      break;
    }
  }
  closedir(blocks);
}

/* ---- dm-verity ------------------------------------------------------------------------------ */

static void read_cmdline(void) {
  mkdir("/proc", 0555);
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) die("mount /proc");
  int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) die("open /proc/cmdline");
  ssize_t n = read(fd, cmdline, sizeof cmdline - 1);
  close(fd);
  if (umount("/proc") != 0) die("umount /proc");
  if (n < 0) die("read /proc/cmdline");
  cmdline[n] = 0;
}

/* The kernel argument bronze.roothash=<64 hex digits> ("" when absent). */
static void read_roothash(char out[65]) {
  out[0] = 0;
  const char *buf = cmdline;
  static const char key[] = "bronze.roothash=";
  for (const char *p = buf; (p = strstr(p, key)) != NULL; p += sizeof key - 1) {
    if (p != buf && p[-1] != ' ') continue; /* a longer argument ending in the key */
    const char *v = p + sizeof key - 1;
    size_t len = strcspn(v, " \n");
    if (len != 64 || strspn(v, "0123456789abcdef") < 64) fail("bronze.roothash= is not 64 lower-case hex digits (a SHA-256 root hash)");
    memcpy(out, v, 64);
    out[64] = 0;
  }
}

static uint64_t le64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}
static uint32_t le32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

struct verity_params {
  uint64_t data_blocks; /* 4 KiB blocks of squashfs, verified */
  uint64_t hash_start;  /* the tree's first block (after the superblock), in 4 KiB blocks */
  char salt[2 * 256 + 1];
};

/*
 * Where the tree is and how it was made: the squashfs superblock's bytes_used, rounded up to
 * 4 KiB, is where veritysetup's superblock starts. Everything read here is checked by the
 * root hash once the target is up (the squashfs superblock is in data block 0, the salt and
 * sizes shape every hash up to the root), so a changed value can only make verification fail.
 */
static void read_verity_params(int fd, struct verity_params *vp) {
  unsigned char sq[96], sb[512];
  if (pread(fd, sq, sizeof sq, 0) != (ssize_t)sizeof sq) die("read the squashfs superblock");
  if (memcmp(sq, "hsqs", 4) != 0) fail(ROOTFS_IMAGE " is not a squashfs");
  uint64_t used = le64(sq + 40);
  uint64_t offset = (used + VERITY_BLOCK - 1) / VERITY_BLOCK * VERITY_BLOCK;
  if (pread(fd, sb, sizeof sb, (off_t)offset) != (ssize_t)sizeof sb || memcmp(sb, "verity\0\0", 8) != 0)
    fail(ROOTFS_IMAGE " carries no dm-verity hash tree after its squashfs (at byte %llu): refusing to boot an unverified root", (unsigned long long)offset);
  uint32_t version = le32(sb + 8), hash_type = le32(sb + 12);
  uint32_t data_bs = le32(sb + 64), hash_bs = le32(sb + 68);
  uint64_t blocks = le64(sb + 72);
  unsigned salt_size = (unsigned)sb[80] | (unsigned)sb[81] << 8;
  if (version != 1 || hash_type != 1 || strncmp((const char *)sb + 32, "sha256", 32) != 0 || data_bs != VERITY_BLOCK || hash_bs != VERITY_BLOCK || salt_size > 256)
    fail("the dm-verity superblock of " ROOTFS_IMAGE " is not format 1, sha256, 4 KiB blocks");
  if (blocks * VERITY_BLOCK != offset) fail("the dm-verity tree covers %llu blocks, the squashfs takes %llu", (unsigned long long)blocks, (unsigned long long)(offset / VERITY_BLOCK));
  vp->data_blocks = blocks;
  vp->hash_start = offset / VERITY_BLOCK + 1;
  for (unsigned i = 0; i < salt_size; i++) snprintf(vp->salt + 2 * i, 3, "%02x", sb[88 + i]);
  vp->salt[2 * salt_size] = 0;
  if (salt_size == 0) strcpy(vp->salt, "-");
}

/* One device-mapper ioctl on /dev/mapper/control; buf starts with a struct dm_ioctl. */
static void dm_call(int ctl, unsigned long req, void *buf, size_t size, uint32_t flags, const char *what) {
  struct dm_ioctl *io = buf;
  io->version[0] = DM_VERSION_MAJOR;
  io->version[1] = 0;
  io->version[2] = 0;
  io->data_size = (uint32_t)size;
  io->data_start = sizeof *io;
  io->flags = flags;
  strncpy(io->name, DM_NAME, sizeof io->name - 1);
  if (ioctl(ctl, req, buf) != 0) die(what);
}

/* The verified device (/dev/dm-N) over the loop device `loop`, with the root hash from the
   command line; returns its data blocks, for verify_all. */
static unsigned long long setup_verity(int loop, const char *roothash, char *dev, size_t devsize) {
  struct verity_params vp;
  read_verity_params(loop, &vp);
  struct stat st;
  if (fstat(loop, &st) != 0) die("fstat the loop device");
  unsigned maj = major(st.st_rdev), min = minor(st.st_rdev);

  mkdir("/dev/mapper", 0755);
  int ctl = open("/dev/mapper/control", O_RDWR | O_CLOEXEC);
  if (ctl < 0) {
    /* devtmpfs names it mapper/control; make it if this kernel did not. */
    if (mknod("/dev/mapper/control", S_IFCHR | 0600, makedev(10, 236)) != 0 && errno != EEXIST) die("mknod /dev/mapper/control");
    ctl = open("/dev/mapper/control", O_RDWR | O_CLOEXEC);
    if (ctl < 0) die("open /dev/mapper/control");
  }
  union {
    struct dm_ioctl io;
    unsigned char bytes[16384];
  } buf;
  memset(&buf, 0, sizeof buf);
  dm_call(ctl, DM_DEV_CREATE, &buf, sizeof buf, DM_READONLY_FLAG, "DM_DEV_CREATE " DM_NAME);
  unsigned dmin = minor(buf.io.dev);

  /* The table: one verity target over the whole squashfs, data and tree on the same device.
     check_at_most_once: a data block is hashed the first time it is read, not again (the full
     read below hashes every block once, so the squashfs's own reads after it cost nothing).
     What that gives up is catching a change made to the backing file while the node runs; it
     is a file in the kernel's initial rootfs, in memory, hidden under the new root. */
  memset(&buf, 0, sizeof buf);
  struct dm_target_spec *t = (struct dm_target_spec *)(buf.bytes + sizeof buf.io);
  char *params = (char *)(t + 1);
  t->sector_start = 0;
  t->length = vp.data_blocks * (VERITY_BLOCK / 512);
  strncpy(t->target_type, "verity", sizeof t->target_type - 1);
  int n = snprintf(params, sizeof buf.bytes - sizeof buf.io - sizeof *t, "1 %u:%u %u:%u %u %u %llu %llu sha256 %s %s 1 check_at_most_once", maj, min, maj, min, VERITY_BLOCK, VERITY_BLOCK,
                   (unsigned long long)vp.data_blocks, (unsigned long long)vp.hash_start, roothash, vp.salt);
  size_t used = sizeof buf.io + sizeof *t + (size_t)n + 1;
  used = (used + 7) & ~(size_t)7;
  t->next = 0;
  buf.io.target_count = 1;
  dm_call(ctl, DM_TABLE_LOAD, &buf, used, DM_READONLY_FLAG, "DM_TABLE_LOAD (verity)");
  memset(&buf, 0, sizeof buf);
  dm_call(ctl, DM_DEV_SUSPEND, &buf, sizeof buf.io, 0, "DM_DEV_SUSPEND (resume " DM_NAME ")");
  close(ctl);

  snprintf(dev, devsize, "/dev/dm-%u", dmin);
  if (access(dev, F_OK) != 0 && mknod(dev, S_IFBLK | 0600, makedev(major(buf.io.dev), dmin)) != 0 && errno != EEXIST) die("mknod the verity device");
  return vp.data_blocks;
}

/* Reads the verity device `dev` whole, once: a block that does not hash to the tree (or a tree
   that does not hash to the root) is an I/O error here, with the kernel's own "data block N is
   corrupted" above, and the boot stops. */
static void verify_all(const char *dev, unsigned long long data_blocks, const char *roothash) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int fd = open(dev, O_RDONLY | O_CLOEXEC);
  if (fd < 0) die("open the verity device");
  static char chunk[1 << 20];
  unsigned long long total = data_blocks * VERITY_BLOCK, done = 0;
  while (done < total) {
    ssize_t r = read(fd, chunk, sizeof chunk);
    if (r < 0) {
      int e = errno;
      /* Name the block: re-read the failed chunk a verity block at a time. The kernel's own
         "data block N is corrupted" goes out on its console, which can drop characters under
         load; this line, written through the tty, does not. */
      static char one[VERITY_BLOCK];
      unsigned long long block = done / VERITY_BLOCK, end = (done + sizeof chunk) / VERITY_BLOCK;
      while (block < end && block < data_blocks && pread(fd, one, sizeof one, (off_t)(block * VERITY_BLOCK)) == (ssize_t)sizeof one) block++;
      fail("the root filesystem does not match the root hash it was booted with: data block %llu (byte %llu) of %s failed to read (%s); expected root hash %s. Refusing to boot.",
           block, block * VERITY_BLOCK, ROOTFS_IMAGE, strerror(e), roothash);
    }
    if (r == 0) fail("the verity device ended at byte %llu of %llu", done, total);
    done += (unsigned long long)r;
  }
  close(fd);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
  say("bronze preinit: %s verified (dm-verity, %llu blocks, root hash %s, read in %ld ms)\n", ROOTFS_IMAGE, data_blocks, roothash, ms);
}

/*
 * Reads ahead, in a child at nice 10, the parts of the binary the node's processes run
 * (/usr/share/bronze/init.prefetch: "<offset> <length>" lines, written at build time by
 * image-builder/prefetch-ranges.ts), so that their squashfs blocks are decompressed into the
 * page cache on a CPU left idle, instead of one page fault at a time on machined's own. It
 * starts while this process reads the verity device whole (whose hashing keeps one CPU busy)
 * and goes on while machined's Node starts. It only reads: nothing of the root runs before the
 * whole read has passed, and every block it reads is verified by dm-verity like any other (a
 * changed one is an I/O error for it too). Best effort: a missing list or a failed read ends
 * the child, silently. The child says how long it took; machined, its parent once this process
 * has exec'ed it, reaps it. `root` is where the squashfs is mounted.
 */
#define PREFETCH_LIST "/usr/share/bronze/init.prefetch"
static void prefetch_init(const char *root) {
  if (fork() != 0) return;
  setpriority(PRIO_PROCESS, 0, 10);
  char path[256];
  snprintf(path, sizeof path, "%s%s", root, PREFETCH_LIST);
  FILE *list = fopen(path, "re");
  snprintf(path, sizeof path, "%s/sbin/init", root);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (!list || fd < 0) _exit(0);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  static char chunk[1 << 20];
  unsigned long long offset, length, total = 0;
  while (fscanf(list, "%llu %llu", &offset, &length) == 2) {
    for (unsigned long long done = 0; done < length;) {
      size_t want = length - done < sizeof chunk ? (size_t)(length - done) : sizeof chunk;
      ssize_t r = pread(fd, chunk, want, (off_t)(offset + done));
      if (r <= 0) _exit(0);
      done += (unsigned long long)r;
      total += (unsigned long long)r;
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  say("bronze preinit: read %llu MiB of /sbin/init ahead in %ld ms\n", total >> 20, (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
  _exit(0);
}

int main(void) {
  mkdir("/dev", 0755);
  if (mount("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, "mode=0755") != 0 && errno != EBUSY)
    die("mount devtmpfs on /dev");
  setup_console();
  say("bronze preinit: starting\n");

  read_cmdline();
  char roothash[65];
  read_roothash(roothash);
  if (!roothash[0]) fail("no bronze.roothash= on the kernel command line: refusing to boot a root that is not verified");

  int loop = attach_loop(ROOTFS_IMAGE);
  char rootdev[64];
#ifdef BRONZE_BENCH_UNVERIFIED
  /* Only bench/verity.ts builds this, to measure what verifying costs against the same image
     mounted straight from its loop device. image-builder/initramfs.sh never defines it, and
     test/e2e/verity.test.ts boots the image's own preinit to show that it refuses. */
  say("bronze preinit: BENCHMARK BUILD: mounting %s without dm-verity\n", ROOTFS_IMAGE);
  snprintf(rootdev, sizeof rootdev, "/dev/loop%d", loop_number(loop));
  (void)setup_verity;
  (void)verify_all;
#else
  unsigned long long data_blocks = setup_verity(loop, roothash, rootdev, sizeof rootdev);
#endif

  mkdir(NEWROOT, 0755);
  /* Mounted before the whole read, so that the read-ahead of the binary runs beside it; a
     mount that fails (the squashfs's own metadata does not verify) waits for the whole read,
     which names the block. */
  int mounted = mount(rootdev, NEWROOT, "squashfs", MS_RDONLY | MS_NODEV, NULL) == 0;
  if (mounted) prefetch_init(NEWROOT);
#ifndef BRONZE_BENCH_UNVERIFIED
  verify_all(rootdev, data_blocks, roothash);
#endif
  if (!mounted && mount(rootdev, NEWROOT, "squashfs", MS_RDONLY | MS_NODEV, NULL) != 0) die("mount the verified rootfs.sqsh");
  close(loop); /* the verity target holds the loop device now */
  if (mount("tmpfs", NEWROOT "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64m") != 0)
    die("mount tmpfs on /newroot/run");
  /* /system: machined starts apid and networkd before it has loaded, and their sockets live here. */
  if (mount("system", NEWROOT "/system", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0)
    die("mount tmpfs on /newroot/system");
  if (mount("/dev", NEWROOT "/dev", NULL, MS_MOVE, NULL) != 0) die("move /dev into the new root");
  /* /proc and /sys: networkd and udevd start while machined loads, and networkd reads the
     kernel command line (bronze.hostname=, ip=) before it starts DHCP; made here, they are
     there from the first instruction of /sbin/init instead of after machined has loaded. */
  if (mount("proc", NEWROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) die("mount proc on /newroot/proc");
  if (mount("sysfs", NEWROOT "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) die("mount sysfs on /newroot/sys");

  /* switch_root: the old root is the kernel's rootfs (not unmountable); free what we can. */
  unlink("/init");
  if (chdir(NEWROOT) != 0) die("chdir " NEWROOT);
  if (mount(".", "/", NULL, MS_MOVE, NULL) != 0) die("move new root over /");
  if (chroot(".") != 0) die("chroot");
  if (chdir("/") != 0) die("chdir /");

  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  say("bronze preinit: exec /sbin/init (preinit's CPU %ld ms, sys %ld ms)\n", (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000,
      ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000);
  char *const argv[] = {"/sbin/init", NULL};
  /* NODE_OPTIONS: src/machined/service-graph.ts's ROLE_NODE_OPTIONS, for machined (the daemons
     get them from machined). */
  char *const envp[] = {"PATH=/sbin:/usr/sbin:/bin:/usr/bin", "HOME=/", "TERM=linux", "NODE_OPTIONS=--use-openssl-ca", NULL};
  execve("/sbin/init", argv, envp);
  die("exec /sbin/init");
  return 1;
}
