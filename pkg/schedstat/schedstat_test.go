package schedstat

import "testing"

func TestReadRefusesBadID(t *testing.T) {
	r := &Reader{}
	for _, id := range []string{"", "abc", "0123456789abc"} {
		if _, err := r.Read(0, id); err == nil {
			t.Errorf("Read(0, %q) did not fail", id)
		}
	}
}
