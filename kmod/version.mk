# CGPU_VERSION is the cgpu release: PACKAGE_VERSION of the dkms.conf beside this file, the
# one place it is written (DKMS requires it there, and builds the module from this
# directory alone). Kbuild, the top-level Makefile and libcgpu/Makefile include this, so
# every part is stamped from it at build time.
CGPU_VERSION_FILE := $(dir $(lastword $(MAKEFILE_LIST)))dkms.conf
CGPU_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' $(CGPU_VERSION_FILE))
ifeq ($(CGPU_VERSION),)
$(error $(CGPU_VERSION_FILE) has no PACKAGE_VERSION="...")
endif
