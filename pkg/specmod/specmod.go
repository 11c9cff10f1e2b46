// Package specmod is the change cgpu-runtime makes to a container's OCI spec before the
// next runtime sees it. It is pure: a spec, a plan and what to inject in, the spec edited,
// no I/O, so each step of the change is tested on its own. Every step only adds: the
// spec's own mounts, devices, hooks and environment stay as they were.
package specmod

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/cgpu-project/cgpu/pkg/alloc"
	"github.com/cgpu-project/cgpu/pkg/oci"
)

// Injection is what a cGPU container gets besides its environment: host files bound
// into it (libcgpu, the /etc/ld.so.preload naming it, on the simulated node the driver's
// stand-ins) and devices: /dev/cgpu, which the hook talks to the kernel through (none
// when no kernel module keeps the node's tree: the hook then enforces the budget from
// the environment), and where the stand-in NVIDIA driver is loaded its nodes.
type Injection struct {
	Binds   []Bind
	Devices []Device
}

// Bind is a host file bound at Dest in the container, read-only unless Writable.
type Bind struct {
	Source, Dest string
	Writable     bool
}

// Device is a character device made in the container and opened to it in its device
// cgroup.
type Device struct {
	Path         string
	Major, Minor int64
}

// Apply edits s for a container registered with plan p.
func Apply(s *oci.Spec, p alloc.Plan, in Injection) error {
	if !p.Enabled {
		return nil
	}
	if err := addEnv(s, p); err != nil {
		return err
	}
	return Inject(s, in)
}

// Inject adds in's binds and devices to s; a container with cGPU off that still gets the
// simulated driver has its spec changed by this step alone.
func Inject(s *oci.Spec, in Injection) error {
	if err := addBinds(s, in.Binds); err != nil {
		return err
	}
	for _, d := range in.Devices {
		if err := addDevice(s, d); err != nil {
			return err
		}
	}
	return nil
}

// addEnv writes the plan's own decisions (the GPUs placed, MEM_DEV from the device, the
// bytes per GPU) into the process environment, so the NVIDIA hook exposes the GPUs the
// instances are on and the in-container hook reads the same decision. A variable the plan
// sets replaces every entry of that name: getenv takes the first, and an image's
// CGPU_MEM_LIMIT_BYTES must not win over the plan's. Others stay as set.
func addEnv(s *oci.Spec, p alloc.Plan) error {
	env, err := s.Env()
	if err != nil {
		return err
	}
	added := p.Added(alloc.EnvMap(env))
	if len(added) == 0 {
		return nil
	}
	kept := make([]string, 0, len(env)+len(added))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := added[k]; !ok {
			kept = append(kept, kv)
		}
	}
	keys := make([]string, 0, len(added))
	for k := range added {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		kept = append(kept, k+"="+added[k])
	}
	return s.SetEnv(kept)
}

type mount struct {
	Destination string   `json:"destination"`
	Type        string   `json:"type,omitempty"`
	Source      string   `json:"source,omitempty"`
	Options     []string `json:"options,omitempty"`
}

// addBinds appends the binds after the spec's own mounts, so they are mounted last and
// win over an image's or a volume's file at the same place. A bind already present (a
// create retried on the same bundle) is not added twice.
func addBinds(s *oci.Spec, binds []Bind) error {
	mounts, err := list(s.Raw("mounts"), "mounts")
	if err != nil {
		return err
	}
	have := map[[2]string]bool{}
	for _, raw := range mounts {
		var m mount
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("config.json: mounts: %w", err)
		}
		have[[2]string{m.Source, m.Destination}] = true
	}
	for _, b := range binds {
		if have[[2]string{b.Source, b.Dest}] {
			continue
		}
		// No noexec: the driver's libraries are mapped executable and nvidia-smi runs.
		opts := []string{"bind", "ro", "nosuid", "nodev"}
		if b.Writable {
			opts = []string{"bind", "nosuid", "nodev", "noexec"}
		}
		raw, err := json.Marshal(mount{Destination: b.Dest, Type: "bind", Source: b.Source, Options: opts})
		if err != nil {
			return err
		}
		mounts = append(mounts, raw)
	}
	return setTop(s, "mounts", mounts)
}

type device struct {
	Path     string `json:"path"`
	Type     string `json:"type"`
	Major    int64  `json:"major"`
	Minor    int64  `json:"minor"`
	FileMode *int64 `json:"fileMode,omitempty"`
	UID      *int64 `json:"uid,omitempty"`
	GID      *int64 `json:"gid,omitempty"`
}

type deviceRule struct {
	Allow  bool   `json:"allow"`
	Type   string `json:"type"`
	Major  int64  `json:"major"`
	Minor  int64  `json:"minor"`
	Access string `json:"access"`
}

// addDevice makes d in the container (mode 0666, as on the host: every process of the
// container charges through /dev/cgpu and allocates through the NVIDIA nodes) unless the spec already has a device at that path (a
// privileged container gets the host's), and appends the cgroup rule that opens it
// after the spec's own rules, which start by denying every device.
func addDevice(s *oci.Spec, d Device) error {
	linux, err := object(s.Raw("linux"), "linux")
	if err != nil {
		return err
	}
	devices, err := list(linux["devices"], "linux.devices")
	if err != nil {
		return err
	}
	present := false
	for _, raw := range devices {
		var have device
		if err := json.Unmarshal(raw, &have); err != nil {
			return fmt.Errorf("config.json: linux.devices: %w", err)
		}
		present = present || have.Path == d.Path
	}
	if !present {
		mode, root := int64(0o666), int64(0)
		raw, err := json.Marshal(device{Path: d.Path, Type: "c", Major: d.Major, Minor: d.Minor, FileMode: &mode, UID: &root, GID: &root})
		if err != nil {
			return err
		}
		if err := put(linux, "devices", append(devices, raw)); err != nil {
			return err
		}
	}
	resources, err := object(linux["resources"], "linux.resources")
	if err != nil {
		return err
	}
	rules, err := list(resources["devices"], "linux.resources.devices")
	if err != nil {
		return err
	}
	raw, err := json.Marshal(deviceRule{Allow: true, Type: "c", Major: d.Major, Minor: d.Minor, Access: "rwm"})
	if err != nil {
		return err
	}
	if err := put(resources, "devices", append(rules, raw)); err != nil {
		return err
	}
	if err := put(linux, "resources", resources); err != nil {
		return err
	}
	return setTop(s, "linux", linux)
}

// list reads a JSON array as its raw elements, so elements cgpu does not know survive
// byte for byte; absent and null are empty.
func list(raw json.RawMessage, what string) ([]json.RawMessage, error) {
	var l []json.RawMessage
	if len(raw) == 0 {
		return l, nil
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Errorf("config.json: %s: %w", what, err)
	}
	return l, nil
}

// object reads a JSON object as its raw fields; absent and null are empty.
func object(raw json.RawMessage, what string) (map[string]json.RawMessage, error) {
	var o map[string]json.RawMessage
	if len(raw) != 0 {
		if err := json.Unmarshal(raw, &o); err != nil {
			return nil, fmt.Errorf("config.json: %s: %w", what, err)
		}
	}
	if o == nil {
		o = map[string]json.RawMessage{}
	}
	return o, nil
}

// put marshals v into m[key]. Values here are raw JSON read from the spec or built by
// this package, so marshalling them cannot fail in practice; the error is still passed on.
func put(m map[string]json.RawMessage, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("config.json: %s: %w", key, err)
	}
	m[key] = raw
	return nil
}

// setTop writes a top-level field of the spec.
func setTop(s *oci.Spec, key string, v any) error {
	m := map[string]json.RawMessage{}
	if err := put(m, key, v); err != nil {
		return err
	}
	s.SetRaw(key, m[key])
	return nil
}
