// Package version is the cgpu release a program was built from.
package version

// Unknown is the version of a build that did not go through make: such a build cannot
// know its release, and says so rather than carry a number that goes stale.
const Unknown = "unknown (built without make)"

// Version is PACKAGE_VERSION of kmod/dkms.conf, the one place the release is written;
// make stamps it here (-ldflags "-X github.com/cgpu-project/cgpu/pkg/version.Version=...").
var Version = Unknown

// RuntimePrefix begins the first line of cgpu-runtime --version, which docker cgpu
// version reads; the version follows it.
const RuntimePrefix = "cgpu-runtime version "
