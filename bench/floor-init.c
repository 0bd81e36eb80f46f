/* The benchmark's floor (bench/boot.ts): an init that powers the machine off at once, so that
 * the same kernel and command line under the same QEMU show how long booting alone takes. */
#include <sys/reboot.h>
#include <unistd.h>

int main(void) {
  sync();
  reboot(RB_POWER_OFF);
  return 1;
}
