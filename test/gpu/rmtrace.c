// SPDX-License-Identifier: MIT
/*
 * librmtrace.so: preloaded into a CUDA program, writes one line for each ioctl it makes
 * on NVIDIA's device files (/dev/nvidiactl, /dev/nvidiaN, /dev/nvidia-uvm) to
 * $RMTRACE_OUT, after the driver answered. It answers what cgpu_km's enforcement assumes
 * of libcuda and no machine here can show (docs/kmod.md, "Not yet"): which classes it
 * allocates and with which NV_MEMORY_ALLOCATION_PARAMS flags (NV50_MEMORY_VIRTUAL's LAZY,
 * EXTERNALLY_MANAGED and SPARSE, which decide what page tables RM makes for the range
 * when it makes it), in which order, and what it registers with nvidia-uvm.
 * test/gpu/rmtrace.sh reads the lines.
 *
 * libcuda calls libc's ioctl (its dynamic imports, checked on Debian's 535 and 550
 * libcuda1), so interposing ioctl sees every call; the layouts are the stand-in's
 * (simdrv/lib/abi.h, checked against NVIDIA's headers by simdrv/conformance).
 *
 *   rm alloc form=nvos21|nvos64 xfer=0|1 class=0x.. root=0x.. parent=0x.. handle=0x..
 *            status=0x.. [flags=0x.. lazy=0|1 ext=0|1 sparse=0|1 attr=0x.. attr2=0x..
 *            page=P size=N] (memory classes; P, the page size the driver chose: default
 *            4k 64k 2m 512m) [vasflags=0x.. extowned=0|1] (VA spaces: nvidia-uvm's is
 *            externally owned)
 *   rm free root=0x.. handle=0x.. status=0x..
 *   rm dup root=0x.. parent=0x.. handle=0x.. src=0x.. status=0x..
 *   rm dmamap root=0x.. dma=0x.. memory=0x.. offset=0x.. length=N status=0x..
 *            (NV_ESC_RM_MAP_MEMORY_DMA: memory mapped into a GPU VA range of RM's,
 *            whose page tables RM makes; offset, the GPU VA the driver gave)
 *   rm dmaunmap root=0x.. dma=0x.. memory=0x.. offset=0x.. status=0x..
 *   rm control cmd=0x.. status=0x..  (or rc=N errno=E when the ioctl itself failed)
 *   rm vidheap function=N status=0x..  (NV_ESC_RM_VID_HEAP_CONTROL, RM's older way)
 *   rm esc nr=0x.. rc=N [errno=E] xfer=0|1  (any other, or any that failed: an XFER's
 *                                            inner one)
 *   uvm cmd=N [name=NAME] rc=N       (NAME: the commands the stand-in serves)
 *   uvm cmd=mmap name=MMAP addr=0x.. length=N rc=0|-1 [errno=E]  (a mmap of
 *                                    /dev/nvidia-uvm: a managed range, or a semaphore
 *                                    pool's CPU mapping; cgpu_km refuses the first kind
 *                                    to containers, so one at cuInit or a context's
 *                                    creation would fail every container's CUDA)
 *   mark NAME                        (rmtrace_mark, called by the probe between steps)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "abi.h"

static int out_fd = -1;
static int (*real_ioctl)(int, unsigned long, ...);

/*
 * One write of a whole line to a file opened O_APPEND: no lock, so neither a fork while
 * another thread writes nor an ioctl from a signal handler can leave one held.
 */
static void say(const char *fmt, ...)
{
	int fd = __atomic_load_n(&out_fd, __ATOMIC_ACQUIRE);
	char line[512];
	va_list ap;
	int n;

	if (fd < 0) {
		const char *path = getenv("RMTRACE_OUT");
		int none = -1;

		fd = path && *path ? open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) :
				     fcntl(2, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return;
		if (!__atomic_compare_exchange_n(&out_fd, &none, fd, false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			close(fd);
			fd = none;
		}
	}
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	(void)!write(fd, line, (size_t)n);
}

__attribute__((visibility("default"))) void rmtrace_mark(const char *name)
{
	say("mark %s\n", name);
}

enum node { OTHER, RM, UVM };

static enum node node_of(int fd)
{
	char link[64], path[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return OTHER;
	path[n] = 0;
	if (!strcmp(path, "/dev/nvidia-uvm"))
		return UVM;
	if (!strcmp(path, "/dev/nvidiactl") ||
	    (!strncmp(path, "/dev/nvidia", 11) && path[11] >= '0' && path[11] <= '9'))
		return RM;
	return OTHER;
}

static int is_memory(sd_u32 cls)
{
	return cls == SD_NV01_MEMORY_LOCAL_USER || cls == SD_NV50_MEMORY_VIRTUAL ||
	       cls == SD_NV01_MEMORY_SYSTEM || cls == SD_NV_MEMORY_EXTENDED_USER ||
	       cls == SD_NV01_MEMORY_LOCAL_PHYSICAL;
}

static const char *page_of(const struct sd_memory_alloc *m)
{
	switch ((m->attr >> SD_ATTR_PAGE_SIZE_SHIFT) & SD_ATTR_PAGE_SIZE_MASK) {
	case SD_ATTR_PAGE_SIZE_4KB:
		return "4k";
	case SD_ATTR_PAGE_SIZE_BIG:
		return "64k";
	case SD_ATTR_PAGE_SIZE_HUGE:
		return ((m->attr2 >> SD_ATTR2_PAGE_SIZE_HUGE_SHIFT) & SD_ATTR2_PAGE_SIZE_HUGE_MASK) ==
				       SD_ATTR2_PAGE_SIZE_HUGE_512MB ?
			       "512m" :
			       "2m";
	}
	return "default";
}

static void alloc_line(const void *arg, unsigned size, int xfer)
{
	const struct sd_nvos21 *a = arg;
	const struct sd_nvos64 *b = arg;
	const struct sd_memory_alloc *m;
	const struct sd_vaspace_alloc *v;
	sd_u32 status, psize;
	sd_u64 params;
	char extra[160] = "";

	if (size == sizeof(struct sd_nvos21)) {
		status = a->status;
		params = a->pAllocParms;
		psize = a->paramsSize;
	} else if (size == sizeof(struct sd_nvos64)) {
		status = b->status;
		params = b->pAllocParms;
		psize = b->paramsSize;
	} else {
		say("rm alloc form=size%u xfer=%d\n", size, xfer);
		return;
	}
	/*
	 * RM copies a class's own size of parameters whatever paramsSize says, so a caller
	 * may leave it 0: they are read here when the driver read them (it made the object)
	 * or when paramsSize vouches for the size.
	 */
	m = (const void *)(unsigned long)params;
	v = (const void *)(unsigned long)params;
	if (is_memory(a->hClass) && m && (status == 0 || psize >= SD_MEMPARAMS_SIZE_OLD))
		snprintf(extra, sizeof(extra),
			 " flags=0x%x lazy=%d ext=%d sparse=%d attr=0x%x attr2=0x%x page=%s size=%llu",
			 m->flags, !!(m->flags & SD_ALLOC_FLAGS_LAZY),
			 !!(m->flags & SD_ALLOC_FLAGS_EXTERNALLY_MANAGED),
			 !!(m->flags & SD_ALLOC_FLAGS_SPARSE), m->attr, m->attr2, page_of(m), m->size);
	else if (a->hClass == SD_FERMI_VASPACE_A && v && (status == 0 || psize >= sizeof(*v)))
		snprintf(extra, sizeof(extra), " vasflags=0x%x extowned=%d", v->flags,
			 !!(v->flags & SD_VASPACE_FLAGS_IS_EXTERNALLY_OWNED));
	say("rm alloc form=%s xfer=%d class=0x%x root=0x%x parent=0x%x handle=0x%x status=0x%x%s\n",
	    size == sizeof(struct sd_nvos21) ? "nvos21" : "nvos64", xfer, a->hClass, a->hRoot,
	    a->hObjectParent, a->hObjectNew, status, extra);
}

static void rm_line(unsigned nr, void *arg, unsigned size, int xfer, int rc, int err)
{
	if (rc && nr == SD_ESC_IOCTL_XFER_CMD && size == sizeof(struct sd_xfer))
		say("rm esc nr=0x%x rc=%d errno=%d xfer=1\n", ((struct sd_xfer *)arg)->cmd, rc, err);
	else if (rc && nr == SD_ESC_RM_CONTROL && size == sizeof(struct sd_nvos54))
		say("rm control cmd=0x%x rc=%d errno=%d\n", ((struct sd_nvos54 *)arg)->cmd, rc, err);
	else if (rc)
		say("rm esc nr=0x%x rc=%d errno=%d xfer=%d\n", nr, rc, err, xfer);
	else if (nr == SD_ESC_RM_ALLOC)
		alloc_line(arg, size, xfer);
	else if (nr == SD_ESC_RM_FREE && size == sizeof(struct sd_nvos00)) {
		struct sd_nvos00 *f = arg;

		say("rm free root=0x%x handle=0x%x status=0x%x\n", f->hRoot, f->hObjectOld, f->status);
	} else if (nr == SD_ESC_RM_DUP_OBJECT && size == sizeof(struct sd_nvos55)) {
		struct sd_nvos55 *d = arg;

		say("rm dup root=0x%x parent=0x%x handle=0x%x src=0x%x status=0x%x\n", d->hClient,
		    d->hParent, d->hObject, d->hObjectSrc, d->status);
	} else if (nr == SD_ESC_RM_MAP_MEMORY_DMA && size == sizeof(struct sd_nvos46)) {
		struct sd_nvos46 *m = arg;

		say("rm dmamap root=0x%x dma=0x%x memory=0x%x offset=0x%llx length=%llu status=0x%x\n",
		    m->hClient, m->hDma, m->hMemory, m->dmaOffset, m->length, m->status);
	} else if (nr == SD_ESC_RM_UNMAP_MEMORY_DMA && size == sizeof(struct sd_nvos47)) {
		struct sd_nvos47 *u = arg;

		say("rm dmaunmap root=0x%x dma=0x%x memory=0x%x offset=0x%llx status=0x%x\n",
		    u->hClient, u->hDma, u->hMemory, u->dmaOffset, u->status);
	} else if (nr == SD_ESC_RM_CONTROL && size == sizeof(struct sd_nvos54))
		say("rm control cmd=0x%x status=0x%x\n", ((struct sd_nvos54 *)arg)->cmd,
		    ((struct sd_nvos54 *)arg)->status);
	else if (nr == SD_ESC_IOCTL_XFER_CMD && size == sizeof(struct sd_xfer)) {
		struct sd_xfer *x = arg;

		rm_line(x->cmd, (void *)(unsigned long)x->ptr, x->size, 1, 0, 0);
	} else if (nr == SD_ESC_RM_VID_HEAP_CONTROL && size == SD_NVOS32_SIZE)
		say("rm vidheap function=%u status=0x%x\n", ((struct sd_nvos32_head *)arg)->function,
		    ((struct sd_nvos32_head *)arg)->status);
	else
		say("rm esc nr=0x%x rc=0 xfer=%d\n", nr, xfer);
}

static const char *uvm_name(unsigned long cmd)
{
	switch (cmd) {
	case SD_UVM_INITIALIZE:
		return " name=INITIALIZE";
	case SD_UVM_REGISTER_GPU:
		return " name=REGISTER_GPU";
	case SD_UVM_UNREGISTER_GPU:
		return " name=UNREGISTER_GPU";
	case SD_UVM_REGISTER_GPU_VASPACE:
		return " name=REGISTER_GPU_VASPACE";
	case SD_UVM_UNREGISTER_GPU_VASPACE:
		return " name=UNREGISTER_GPU_VASPACE";
	case SD_UVM_REGISTER_CHANNEL:
		return " name=REGISTER_CHANNEL";
	case SD_UVM_UNREGISTER_CHANNEL:
		return " name=UNREGISTER_CHANNEL";
	case SD_UVM_CREATE_EXTERNAL_RANGE:
		return " name=CREATE_EXTERNAL_RANGE";
	case SD_UVM_MAP_EXTERNAL_ALLOCATION:
		return " name=MAP_EXTERNAL_ALLOCATION";
	case SD_UVM_FREE:
		return " name=FREE";
	case SD_UVM_MAP_EXTERNAL_SPARSE:
		return " name=MAP_EXTERNAL_SPARSE";
	case SD_UVM_PAGEABLE_MEM_ACCESS:
		return " name=PAGEABLE_MEM_ACCESS";
	case SD_UVM_MIGRATE:
		return " name=MIGRATE";
	case SD_UVM_ALLOC_SEMAPHORE_POOL:
		return " name=ALLOC_SEMAPHORE_POOL";
	case SD_UVM_MAP_DYNAMIC_PARALLELISM_REGION:
		return " name=MAP_DYNAMIC_PARALLELISM_REGION";
	}
	return "";
}

/*
 * The length of the span a command makes page tables for from no RM call (cgpu_km
 * charges them: docs/kmod.md), at the head of its block; 0 for other commands.
 */
static unsigned long long uvm_span_length(unsigned long cmd, const void *arg)
{
	unsigned long long len = 0;

	if (arg && (cmd == SD_UVM_ALLOC_SEMAPHORE_POOL || cmd == SD_UVM_MAP_DYNAMIC_PARALLELISM_REGION ||
		    cmd == SD_UVM_MAP_EXTERNAL_SPARSE))
		memcpy(&len, (const char *)arg + 8, sizeof(len));
	return len;
}

__attribute__((visibility("default"))) int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;
	int rc, err;
	enum node n;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!real_ioctl)
		real_ioctl = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	rc = real_ioctl(fd, request, arg);
	err = errno;
	n = node_of(fd);
	if (n == RM && _IOC_TYPE(request) == SD_IOCTL_MAGIC)
		rm_line(_IOC_NR(request), arg, _IOC_SIZE(request), 0, rc, err);
	else if (n == UVM)
		say("uvm cmd=%lu%s length=%llu rc=%d\n", request, uvm_name(request),
		    uvm_span_length(request, arg), rc);
	errno = err;
	return rc;
}

/* libcuda's mmaps (libc's mmap, or mmap64, the same function on 64-bit glibc). */
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);

static void *traced_mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset)
{
	void *p;
	int err;

	if (!real_mmap)
		real_mmap = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
	p = real_mmap(addr, length, prot, flags, fd, offset);
	err = errno;
	if (fd >= 0 && node_of(fd) == UVM) {
		if (p == MAP_FAILED)
			say("uvm cmd=mmap name=MMAP addr=%p length=%zu rc=-1 errno=%d\n", addr, length, err);
		else
			say("uvm cmd=mmap name=MMAP addr=%p length=%zu rc=0\n", p, length);
	}
	errno = err;
	return p;
}

__attribute__((visibility("default"))) void *mmap(void *addr, size_t length, int prot, int flags,
						  int fd, off_t offset)
{
	return traced_mmap(addr, length, prot, flags, fd, offset);
}

__attribute__((visibility("default"))) void *mmap64(void *addr, size_t length, int prot, int flags,
						    int fd, off_t offset)
{
	return traced_mmap(addr, length, prot, flags, fd, offset);
}
