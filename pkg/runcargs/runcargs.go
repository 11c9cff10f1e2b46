// Package runcargs reads the command line an OCI runtime gets from containerd (runc's
// global options, a command, its options, the container id), finds what cgpu-runtime
// needs in it, and gives back the same line, less cgpu's own option, for the next runtime.
package runcargs

import (
	"fmt"
	"strings"
)

// ConfigFlag is cgpu-runtime's own option (from daemon.json's runtimeArgs): the path of
// its configuration file. It is taken out before the next runtime sees the arguments.
const ConfigFlag = "cgpu-config"

// Options of runc that take a value, globally and per command; any other option is a
// switch. Knowing them tells an option's value apart from the command or the id.
var (
	globalValued = set("log", "log-format", "root", "criu", "rootless")
	valued       = map[string]map[string]bool{
		"create":   set("bundle", "b", "console-socket", "pid-file", "preserve-fds"),
		"run":      set("bundle", "b", "console-socket", "pid-file", "preserve-fds"),
		"exec":     set("console-socket", "pid-file", "process", "p", "cwd", "env", "e", "user", "u", "additional-gids", "g", "cap", "c", "apparmor", "process-label", "preserve-fds", "cgroup"),
		"kill":     set(),
		"delete":   set(),
		"start":    set(),
		"state":    set(),
		"update":   set("resources", "r", "blkio-weight", "cpu-period", "cpu-quota", "cpu-rt-period", "cpu-rt-runtime", "cpu-share", "cpuset-cpus", "cpuset-mems", "kernel-memory", "kernel-memory-tcp", "memory", "memory-reservation", "memory-swap", "pids-limit", "l3-cache-schema", "mem-bw-schema"),
		"pause":    set(),
		"resume":   set(),
		"ps":       set("format", "f"),
		"events":   set("interval"),
		"features": set(),
	}
)

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Args is one parsed command line.
type Args struct {
	// Config is the value of --cgpu-config, or "".
	Config string
	// Command is runc's command (create, delete, ...), or "" (--version, --help).
	Command string
	// ID is the container id: the command's first operand.
	ID string
	// Bundle is create's --bundle; "" means the working directory, as for runc.
	Bundle string
	// PidFile is create's --pid-file, where the next runtime writes the init's pid, or "".
	PidFile string
	// Log and LogFormat are runc's global --log and --log-format: where containerd looks
	// for the runtime's error message.
	Log, LogFormat string
	// Pass is the line for the next runtime: everything but --cgpu-config.
	Pass []string
	// Global is the part of Pass before the command.
	Global []string
	// Version is runc's global --version (-v).
	Version bool
}

// option splits "--name=value", "-name value" and the like.
func option(arg string) (name, value string, inline, ok bool) {
	if !strings.HasPrefix(arg, "-") || arg == "-" || arg == "--" {
		return "", "", false, false
	}
	name, value, inline = strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return name, value, inline, true
}

// Parse reads args (without the program name).
func Parse(args []string) (Args, error) {
	var a Args
	i := 0
	for ; i < len(args); i++ {
		name, value, inline, ok := option(args[i])
		if !ok {
			break
		}
		start := i
		if (name == ConfigFlag || globalValued[name]) && !inline {
			if i+1 >= len(args) {
				return a, fmt.Errorf("option --%s needs a value", name)
			}
			i++
			value = args[i]
		}
		switch name {
		case ConfigFlag:
			a.Config = value
			continue
		case "log":
			a.Log = value
		case "log-format":
			a.LogFormat = value
		case "version", "v":
			a.Version = true
		}
		a.Global = append(a.Global, args[start:i+1]...)
	}
	a.Pass = append([]string(nil), a.Global...)
	if i == len(args) {
		return a, nil
	}
	a.Command = args[i]
	a.Pass = append(a.Pass, args[i:]...)
	vals := valued[a.Command]
	for i++; i < len(args); i++ {
		if args[i] == "--" {
			if i+1 < len(args) {
				a.ID = args[i+1]
			}
			break
		}
		name, value, inline, ok := option(args[i])
		if !ok {
			a.ID = args[i]
			break
		}
		if vals[name] && !inline {
			if i+1 >= len(args) {
				return a, fmt.Errorf("%s: option --%s needs a value", a.Command, name)
			}
			i++
			value = args[i]
		}
		switch name {
		case "bundle", "b":
			a.Bundle = value
		case "pid-file":
			a.PidFile = value
		}
	}
	return a, nil
}
