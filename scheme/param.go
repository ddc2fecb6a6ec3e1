package scheme

// Parameter is a parameter object (make-parameter). Calling it returns its
// value; parameterize rebinds it for the extent of its body.
type Parameter struct {
	value     Value
	converter Value
}

// NewParameter makes a parameter with initial value v and an optional
// converter procedure (nil for none), applied by parameterize to new values.
// v is used as given.
func NewParameter(v Value, converter Value) *Parameter {
	return &Parameter{value: v, converter: converter}
}

// Get returns the current value of p.
func (p *Parameter) Get(in *Interp) Value { return p.value }

// Set changes the current value of p (the value parameterize restores
// afterwards is unaffected outside its extent).
func (p *Parameter) Set(v Value) { p.value = v }

// SchemeString implements the printer hook.
func (p *Parameter) SchemeString(bool) string { return "#<parameter>" }
