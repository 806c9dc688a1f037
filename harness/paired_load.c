/*
 * lmdb-regress C paired worker, its libraries: each liblmdb build loaded with dlopen, one
 * object per slot (a second slot of one file loads a private copy), every entry point the
 * workloads call resolved into the slot's table, and the version it reports checked.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paired.h"

/* A private copy of the file open as `fd`, for a second slot of one file: the dynamic
 * loader keeps one object per file, and every slot must have its own. -1 on failure. */
static int private_copy(int fd) {
    int copy = memfd_create("lmdb-regress-slot", MFD_CLOEXEC);
    if (copy < 0) return -1;
    char buf[1 << 16];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        if (write(copy, buf, (size_t)n) != n) { close(copy); return -1; }
    if (n < 0) { close(copy); return -1; }
    return copy;
}

/* (device, inode) of the libraries loaded so far. */
static struct { dev_t dev; ino_t ino; } loaded[MAX_SLOTS];
static size_t n_loaded;

/* paired.h's load_library. */
void *load_library(const char *library, const char *version, struct api *a, char *why, size_t cap) {
    struct stat st;
    if (stat(library, &st)) { snprintf(why, cap, "cannot open %s: %s", library, strerror(errno)); return NULL; }
    int again = 0;
    for (size_t i = 0; i < n_loaded; i++) again |= loaded[i].dev == st.st_dev && loaded[i].ino == st.st_ino;
    if (!again && n_loaded < MAX_SLOTS) { loaded[n_loaded].dev = st.st_dev; loaded[n_loaded].ino = st.st_ino; n_loaded++; }
    char path[64];
    const char *from = library;
    if (again) {
        int fd = open(library, O_RDONLY | O_CLOEXEC), copy = fd < 0 ? -1 : private_copy(fd);
        if (fd >= 0) close(fd);
        if (copy < 0) { snprintf(why, cap, "cannot copy %s: %s", library, strerror(errno)); return NULL; }
        snprintf(path, sizeof path, "/proc/self/fd/%d", copy);
        from = path;
    }
    void *h = dlopen(from, RTLD_NOW | RTLD_LOCAL);
    if (!h) { snprintf(why, cap, "cannot load %s: %s", library, dlerror()); return NULL; }
#define RESOLVE(f)                                                                                   \
    if (!(*(void **)&a->f = dlsym(h, #f))) {                                                       \
        snprintf(why, cap, "cannot load %s: no symbol %s", library, #f);                            \
        dlclose(h);                                                                                \
        return NULL;                                                                               \
    }
    API_FUNCTIONS(RESOLVE)
#undef RESOLVE
    int x, y, z;
    const char *reported = a->mdb_version(&x, &y, &z);
    if (strcmp(reported ? reported : "", version)) {
        snprintf(why, cap, "%s: it reports \"%s\", but the run records \"%s\" for it", library, reported, version);
        dlclose(h);
        return NULL;
    }
    return h;
}
