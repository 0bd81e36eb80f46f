/*
 * Bronze preinit: the only C in the image. Node cannot run before a root filesystem with its
 * shared libraries exists, so this tiny static program runs as the initramfs's /init:
 *
 *   1. mounts devtmpfs on /dev and makes /dev/console fds 0, 1, 2;
 *   2. attaches /rootfs.sqsh read-only to a free loop device (LOOP_CONFIGURE);
 *   3. mounts it (squashfs, ro) on /newroot, mounts a tmpfs on /newroot/run (handed over to
 *      machined, which needs a writable, executable place for its native module before it can
 *      mount anything itself) and one on /newroot/system (the sockets of the services machined
 *      starts before it has loaded), and moves /dev into the new root;
 *   4. switches root (move-mount the new root over /, chroot) and execs /sbin/init.
 *
 * Any failure is printed with its cause and ends in a kernel panic (init exiting), which
 * reboots the machine; the bootloader's fallback takes over from there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROOTFS_IMAGE "/rootfs.sqsh"
#define NEWROOT "/newroot"

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

static void die(const char *what) {
  say("bronze preinit: FATAL: %s: %s\n", what, strerror(errno));
  sleep(5);
  _exit(1); /* init exiting panics the kernel; with panic=-1 semantics the machine reboots */
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

int main(void) {
  mkdir("/dev", 0755);
  if (mount("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, "mode=0755") != 0 && errno != EBUSY)
    die("mount devtmpfs on /dev");
  setup_console();
  say("bronze preinit: starting\n");

  int loop = attach_loop(ROOTFS_IMAGE);
  char loopdev[64];
  snprintf(loopdev, sizeof loopdev, "/proc/self/fd/%d", loop);
  /* /proc is not mounted here; resolve the device name through the ioctl result instead. */
  struct loop_info64 info;
  if (ioctl(loop, LOOP_GET_STATUS64, &info) != 0) die("LOOP_GET_STATUS64");
  snprintf(loopdev, sizeof loopdev, "/dev/loop%u", info.lo_number);

  mkdir(NEWROOT, 0755);
  if (mount(loopdev, NEWROOT, "squashfs", MS_RDONLY | MS_NODEV, NULL) != 0) die("mount rootfs.sqsh");
  close(loop);
  if (mount("tmpfs", NEWROOT "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64m") != 0)
    die("mount tmpfs on /newroot/run");
  /* /system: machined starts apid and networkd before it has loaded, and their sockets live here. */
  if (mount("system", NEWROOT "/system", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0)
    die("mount tmpfs on /newroot/system");
  if (mount("/dev", NEWROOT "/dev", NULL, MS_MOVE, NULL) != 0) die("move /dev into the new root");

  /* switch_root: the old root is the kernel's rootfs (not unmountable); free what we can. */
  unlink("/init");
  if (chdir(NEWROOT) != 0) die("chdir " NEWROOT);
  if (mount(".", "/", NULL, MS_MOVE, NULL) != 0) die("move new root over /");
  if (chroot(".") != 0) die("chroot");
  if (chdir("/") != 0) die("chdir /");

  say("bronze preinit: exec /sbin/init\n");
  char *const argv[] = {"/sbin/init", NULL};
  char *const envp[] = {"PATH=/sbin:/usr/sbin:/bin:/usr/bin", "HOME=/", "TERM=linux", NULL};
  execve("/sbin/init", argv, envp);
  die("exec /sbin/init");
  return 1;
}
