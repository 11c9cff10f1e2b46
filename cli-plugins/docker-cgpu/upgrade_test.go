package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestConfirm(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       string
		terminal bool
		yes      bool
		ok       bool
		asked    bool
	}{
		{"--yes goes ahead without asking", "", false, true, true, false},
		{"no terminal and no --yes refuses", "y\n", false, false, false, false},
		{"y", "y\n", true, false, true, true},
		{"YES with blanks", "  YES \n", true, false, true, true},
		{"an empty answer is no", "\n", true, false, false, true},
		{"anything else is no", "sure\n", true, false, false, true},
		{"end of input is no", "", true, false, false, true},
	} {
		var out bytes.Buffer
		err := confirm(strings.NewReader(tc.in), tc.terminal, &out, tc.yes)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok=%v", tc.name, err, tc.ok)
		}
		if asked := strings.Contains(out.String(), "[y/N]"); asked != tc.asked {
			t.Errorf("%s: asked=%v (%q)", tc.name, asked, out.String())
		}
	}
}

func TestScriptArgs(t *testing.T) {
	for _, tc := range []struct {
		o    upgradeOptions
		want []string
	}{
		{upgradeOptions{}, nil},
		{upgradeOptions{hot: true, timeout: 30}, []string{"--hot", "--timeout", "30"}},
		{upgradeOptions{source: "/r/kmod"}, []string{"--source", "/r/kmod"}},
		{upgradeOptions{hot: true, timeout: 5, ko: "/m.ko"}, []string{"--hot", "--timeout", "5", "--ko", "/m.ko"}},
	} {
		if got := tc.o.scriptArgs(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.o, got, tc.want)
		}
	}
}
