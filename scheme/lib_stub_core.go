package scheme

// Temporary stubs until the library half lands (core deletes this file).

func stdlibPrimitives() []*Primitive { return nil }

func installPorts(in *Interp) {}

// WriteString is a stub.
func WriteString(v Value) string { return "" }

// DisplayString is a stub.
func DisplayString(v Value) string { return "" }
