package procfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadEnforcement(t *testing.T) {
	for _, c := range []struct {
		file    string // "" for no file
		want    string
		warn    bool
		wantErr string
	}{
		{"", "", false, ""},
		{"enforcement: on (driver 535.261.03)\n", "on (driver 535.261.03)", false, ""},
		{"enforcement: on (driver 535.261.03)\ntaken back: 3\n", "on (driver 535.261.03)", false, ""},
		{"enforcement: off (driver 999.1 unknown)\n", "off (driver 999.1 unknown)", true, ""},
		{"enforcement: off (no nvidia driver loaded)\n", "off (no nvidia driver loaded)", true, ""},
		{"enforcement: maybe\n", "", false, `"enforcement: maybe" is not`},
		{"on (driver 1)\n", "", false, "is not"},
	} {
		dir := t.TempDir()
		if c.file != "" {
			if err := os.WriteFile(filepath.Join(dir, "enforcement"), []byte(c.file), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := ReadEnforcement(dir)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%q: error %v, want one containing %q", c.file, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: got %q, %v; want %q", c.file, got, err, c.want)
		}
		w := EnforcementWarning(got)
		if (w != "") != c.warn || (c.warn && !strings.Contains(w, got)) {
			t.Errorf("%q: warning %q", c.file, w)
		}
	}
}
