// Package oci reads and rewrites an OCI bundle's config.json without losing anything:
// fields this project does not know are kept as raw JSON and written back unchanged.
package oci

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ConfigName is the bundle's spec file.
const ConfigName = "config.json"

// Spec is a bundle's config.json.
type Spec struct {
	top     map[string]json.RawMessage
	process map[string]json.RawMessage
}

// Parse reads a spec. A spec without "process" is valid (a container that only mounts).
func Parse(b []byte) (*Spec, error) {
	s := &Spec{}
	if err := json.Unmarshal(b, &s.top); err != nil {
		return nil, fmt.Errorf("config.json: %w", err)
	}
	if s.top == nil {
		return nil, fmt.Errorf("config.json: not a JSON object")
	}
	if raw, ok := s.top["process"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &s.process); err != nil {
			return nil, fmt.Errorf("config.json: process: %w", err)
		}
	}
	return s, nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// Marshal writes the spec back.
func (s *Spec) Marshal() ([]byte, error) {
	if s.process != nil {
		raw, err := json.Marshal(s.process)
		if err != nil {
			return nil, err
		}
		s.top["process"] = raw
	}
	return json.Marshal(s.top)
}

// Env is process.env.
func (s *Spec) Env() ([]string, error) {
	var env []string
	if raw, ok := s.process["env"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &env); err != nil {
			return nil, fmt.Errorf("config.json: process.env: %w", err)
		}
	}
	return env, nil
}

// SetEnv replaces process.env.
func (s *Spec) SetEnv(env []string) error {
	if s.process == nil {
		return fmt.Errorf("config.json has no process to set the environment of")
	}
	raw, err := json.Marshal(env)
	if err != nil {
		return err
	}
	s.process["env"] = raw
	return nil
}

// Raw is a top-level field as written ("mounts", "linux", "root"), nil when absent; the
// caller edits what it knows of it and writes it back with SetRaw, so the rest survives.
func (s *Spec) Raw(name string) json.RawMessage { return s.top[name] }

// SetRaw replaces a top-level field.
func (s *Spec) SetRaw(name string, raw json.RawMessage) { s.top[name] = raw }

// Load reads bundle/config.json.
func Load(bundle string) (*Spec, error) {
	b, err := os.ReadFile(filepath.Join(bundle, ConfigName))
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

// Save replaces bundle/config.json by rename, keeping its mode, so the runtime after us
// never reads half a file.
func (s *Spec) Save(bundle string) error {
	path := filepath.Join(bundle, ConfigName)
	b, err := s.Marshal()
	if err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp := path + ".cgpu.tmp"
	if err := os.WriteFile(tmp, b, fi.Mode().Perm()); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
