package main

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/docker/cli/cli-plugins/metadata"
)

// The constructor's JSON and plugin.Run's metadata say the same, the version apart: a
// test build has no CGPU_VERSION, and make stamps both from one variable.
func TestEarlyMetadataIsPluginMetadata(t *testing.T) {
	var early metadata.Metadata
	if err := json.Unmarshal([]byte(earlyMetadataJSON()), &early); err != nil {
		t.Fatalf("constructor's metadata %q: %v", earlyMetadataJSON(), err)
	}
	want := pluginMetadata()
	if early.Version != "" {
		t.Errorf("constructor's version in a test build %q, want empty (no CGPU_VERSION)", early.Version)
	}
	early.Version = want.Version
	if !reflect.DeepEqual(early, want) {
		t.Errorf("constructor's metadata %+v, plugin.Run's %+v", early, want)
	}
	if want.SchemaVersion == "" || want.Vendor == "" || want.ShortDescription == "" {
		t.Errorf("metadata with empty fields: %+v", want)
	}
}
