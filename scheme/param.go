package scheme

// Parameter is a parameter object made by make-parameter.
type Parameter struct {
	value     Value
	converter Value
}

// NewParameter makes a parameter with initial value v and an optional
// converter procedure (nil for none). v is used as given (not converted).
func NewParameter(v Value, converter Value) *Parameter {
	return &Parameter{value: v, converter: converter}
}

// Get returns the current value of p in in.
func (p *Parameter) Get(in *Interp) Value { return p.value }
