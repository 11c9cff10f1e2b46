/* SPDX-License-Identifier: MIT */
/*
 * Included first in every libcgpu source (-include). glibc 2.34 moved these
 * into libc.so.6 under new symbol versions; binding to the original ones
 * (still served by libdl.so.2 and libpthread.so.0) lets one libcgpu.so load
 * in containers with any glibc from 2.17 on, CUDA images on Ubuntu 20.04
 * included. A preloaded library that fails to load limits nothing.
 */
__asm__(".symver dlopen,dlopen@GLIBC_2.2.5");
__asm__(".symver dladdr,dladdr@GLIBC_2.2.5");
__asm__(".symver dlvsym,dlvsym@GLIBC_2.2.5");
__asm__(".symver pthread_once,pthread_once@GLIBC_2.2.5");
__asm__(".symver pthread_create,pthread_create@GLIBC_2.2.5");
__asm__(".symver pthread_sigmask,pthread_sigmask@GLIBC_2.2.5");
