package main

/*
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

// The plugin's metadata, defined here once: the docker CLI starts every plugin with
// docker-cli-plugin-metadata to list it (before each `docker cgpu` command, and for
// `docker info` and `docker --help`). The constructor answers that before the Go
// runtime and the package init of docker's client libraries run: 2 ms instead of
// 22 (docs/cli.md, "Where the time goes"). CGPU_VERSION comes from make, as the Go
// side's version.Version does; without it (a build without make) the constructor
// leaves the call to plugin.Run, which says the version is unknown.
#define CGPU_META_SCHEMA "0.1.0"
#define CGPU_META_VENDOR "cgpu project"
#define CGPU_META_SHORT "Share GPUs between containers with hard memory limits"
#define CGPU_META_URL "https://github.com/cgpu-project/cgpu"
#ifndef CGPU_VERSION
#define CGPU_VERSION ""
#endif

const char cgpu_meta_schema[] = CGPU_META_SCHEMA;
const char cgpu_meta_vendor[] = CGPU_META_VENDOR;
const char cgpu_meta_short[] = CGPU_META_SHORT;
const char cgpu_meta_url[] = CGPU_META_URL;
const char cgpu_meta_json[] = "{\"SchemaVersion\":\"" CGPU_META_SCHEMA
	"\",\"Vendor\":\"" CGPU_META_VENDOR "\",\"Version\":\"" CGPU_VERSION
	"\",\"ShortDescription\":\"" CGPU_META_SHORT "\",\"URL\":\"" CGPU_META_URL "\"}\n";

// Whether the command line is exactly PROGRAM docker-cli-plugin-metadata. From
// /proc/self/cmdline: only glibc passes main's arguments to constructors.
static int cgpu_asked_metadata(void)
{
	static const char want[] = "docker-cli-plugin-metadata";
	char buf[8192];
	ssize_t n = 0, r;
	size_t first;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	while (n < (ssize_t)sizeof(buf) && (r = read(fd, buf + n, sizeof(buf) - n)) > 0)
		n += r;
	close(fd);
	if (n <= 0 || n == (ssize_t)sizeof(buf))
		return 0;
	first = strnlen(buf, n) + 1;
	return (size_t)n == first + sizeof(want) && memcmp(buf + first, want, sizeof(want)) == 0;
}

__attribute__((constructor)) static void cgpu_metadata_early(void)
{
	if (CGPU_VERSION[0] && cgpu_asked_metadata())
		_exit(write(1, cgpu_meta_json, sizeof(cgpu_meta_json) - 1) ==
		      (ssize_t)(sizeof(cgpu_meta_json) - 1) ? 0 : 1);
}
*/
import "C"

import (
	"github.com/cgpu-project/cgpu/pkg/version"
	"github.com/docker/cli/cli-plugins/metadata"
)

// pluginMetadata is what plugin.Run answers docker-cli-plugin-metadata with when the
// constructor above did not.
func pluginMetadata() metadata.Metadata {
	return metadata.Metadata{
		SchemaVersion:    C.GoString(&C.cgpu_meta_schema[0]),
		Vendor:           C.GoString(&C.cgpu_meta_vendor[0]),
		Version:          version.Version,
		ShortDescription: C.GoString(&C.cgpu_meta_short[0]),
		URL:              C.GoString(&C.cgpu_meta_url[0]),
	}
}

// earlyMetadataJSON is the constructor's answer ("" version in a build without make).
func earlyMetadataJSON() string {
	return C.GoString(&C.cgpu_meta_json[0])
}
