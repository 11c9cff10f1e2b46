# shellcheck shell=bash
# private_apt DIR LINE...: an apt state of its own in DIR (its own sources list of the
# LINEs, lists, cache and an empty dpkg status; the system's apt configuration is neither
# read nor changed), updated; sets apt_opts, the options that make apt-get and apt-cache
# use it, and makes DIR/dl a folder apt's sandbox user can download into. For the tests
# that download Debian's NVIDIA packages to check against: never installed.
private_apt() {
	local dir=$1
	shift
	mkdir -p "$dir/state/lists/partial" "$dir/cache/archives/partial" "$dir/etc/sources.list.d" "$dir/dl"
	chmod 711 "$dir"
	chmod 777 "$dir/dl"
	printf '%s\n' "$@" >"$dir/etc/sources.list"
	apt_opts=(-o "Dir::State=$dir/state" -o "Dir::Cache=$dir/cache"
		-o "Dir::Etc::SourceList=$dir/etc/sources.list"
		-o "Dir::Etc::SourceParts=$dir/etc/sources.list.d" -o "Dir::State::status=/dev/null")
	apt-get -q "${apt_opts[@]}" update >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; return 1; }
}

# debian_line TYPE SUITE COMPONENT: a sources.list line of Debian's archive, signed by its key.
debian_line() {
	printf '%s [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian %s %s\n' "$1" "$2" "$3"
}
