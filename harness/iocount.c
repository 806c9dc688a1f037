/* See iocount.h. libc's own functions are found after this program's (dlsym RTLD_NEXT). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "iocount.h"

static uint64_t syncs, bytes;
/* Whether a descriptor syncs each write: 0 not known yet, 1 no, 2 yes. */
static unsigned char dsync[1024];

struct io_mark io_now(void) {
    struct io_mark m = {syncs, bytes};
    return m;
}

void print_io(const struct io *io, unsigned n) {
    printf(",\"io\":[");
    for (unsigned i = 0; i < n; i++)
        printf("%s{\"syncs\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"commits\":%" PRIu64 "}", i ? "," : "", io[i].syncs,
               io[i].bytes, io[i].commits);
    printf("]");
}

/* Untimed, when an environment opens; it also looks up libc's own functions there, not at
 * a timed region's first call: no valid descriptor and nothing to sync, so each call only
 * fails, uncounted. */
void io_forget_descriptors(void) {
    memset(dsync, 0, sizeof dsync);
    (void)fdatasync(-1);
    (void)fsync(-1);
    (void)msync(NULL, 0, 0);
    (void)write(-1, NULL, 0);
    (void)pwrite(-1, NULL, 0, 0);
    (void)writev(-1, NULL, 0);
}

static int syncs_each_write(int fd);

/* Untimed, once an environment has opened its files: each descriptor asked now whether it
 * syncs every write, so a timed region's first write through one asks nothing. */
void io_learn_descriptors(void) {
    for (int fd = 0; fd < (int)sizeof dsync; fd++)
        if (fcntl(fd, F_GETFD) != -1) (void)syncs_each_write(fd);
}

static int syncs_each_write(int fd) {
    if (fd < 0 || fd >= (int)sizeof dsync || !dsync[fd]) {
        int flags = fcntl(fd, F_GETFL);
        int yes = flags != -1 && (flags & O_DSYNC);
        if (fd >= 0 && fd < (int)sizeof dsync) dsync[fd] = yes ? 2 : 1;
        return yes;
    }
    return dsync[fd] == 2;
}

static ssize_t wrote(int fd, ssize_t n) {
    if (n > 0) {
        bytes += (uint64_t)n;
        if (syncs_each_write(fd)) syncs++;
    }
    return n;
}

static int synced(int rc) {
    if (!rc) syncs++;
    return rc;
}

static void *next(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) abort();
    return f;
}

/* libc's `name`, looked up at its first call. */
#define LIBC(name) static __typeof__(&name) libc_##name; if (!libc_##name) libc_##name = (__typeof__(&name))next(#name)

int fdatasync(int fd) {
    LIBC(fdatasync);
    return synced(libc_fdatasync(fd));
}

int fsync(int fd) {
    LIBC(fsync);
    return synced(libc_fsync(fd));
}

int msync(void *addr, size_t len, int flags) {
    LIBC(msync);
    int rc = libc_msync(addr, len, flags);
    return flags & MS_SYNC ? synced(rc) : rc;
}

ssize_t write(int fd, const void *buf, size_t n) {
    LIBC(write);
    return wrote(fd, libc_write(fd, buf, n));
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
    LIBC(pwrite);
    return wrote(fd, libc_pwrite(fd, buf, n, off));
}

ssize_t writev(int fd, const struct iovec *iov, int n) {
    LIBC(writev);
    return wrote(fd, libc_writev(fd, iov, n));
}
