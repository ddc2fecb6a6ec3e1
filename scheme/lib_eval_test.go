package scheme

import "context"

// libEval evaluates src in in; the library's table tests run through it.
func libEval(in *Interp, src string) (Value, error) {
	return in.Eval(context.Background(), src, "lib_test")
}
