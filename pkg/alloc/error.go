package alloc

import (
	"fmt"

	"github.com/cgpu-project/cgpu/pkg/gpu"
)

// Error is a refused intent on one line: the GPU (when one is involved), the value,
// and the rule the value breaks.
type Error struct {
	GPU   *gpu.GPU
	Value string
	Rule  string
}

func (e *Error) Error() string {
	if e.GPU != nil {
		return fmt.Sprintf("%s: %s: %s", e.GPU, e.Value, e.Rule)
	}
	return e.Value + ": " + e.Rule
}
