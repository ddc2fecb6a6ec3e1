package scheme

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// Port is a textual Scheme port. Input ports read from a string (string
// ports) or an io.Reader; output ports write to a strings.Builder (string
// ports) or an io.Writer. The console ports follow the interpreter: the
// current output port made by New writes to whatever in.Stdout is at the time
// of the write.
type Port struct {
	name string

	// Input side: buf[off:] is what has been buffered but not consumed; src,
	// when non-nil, supplies more.
	input  bool
	buf    string
	off    int
	src    io.Reader
	srcEOF bool

	// Output side.
	output bool
	sb     *strings.Builder // string output port
	w      io.Writer        // other output port
	interp *Interp          // console port: write to interp.Stdout

	closer io.Closer // file ports: closed by close-port
	closed bool
}

// NewInputStringPort returns an input port reading s.
func NewInputStringPort(s string) *Port {
	return &Port{name: "string", input: true, buf: s, srcEOF: true}
}

// NewOutputStringPort returns an output port accumulating into a string; see
// (*Port).String.
func NewOutputStringPort() *Port {
	return &Port{name: "string", output: true, sb: &strings.Builder{}}
}

// NewInputPort returns an input port reading from r; name appears in
// messages.
func NewInputPort(r io.Reader, name string) *Port {
	return &Port{name: name, input: true, src: r}
}

// NewOutputPort returns an output port writing to w.
func NewOutputPort(w io.Writer, name string) *Port {
	return &Port{name: name, output: true, w: w}
}

// String returns what has been written to a string output port ("" for
// other ports).
func (p *Port) String() string {
	if p.sb == nil {
		return ""
	}
	return p.sb.String()
}

func (p *Port) kind() string {
	switch {
	case p.input && p.output:
		return "port " + p.name
	case p.input:
		return "input-port " + p.name
	}
	return "output-port " + p.name
}

func (p *Port) writer() io.Writer {
	if p.interp != nil {
		if p.interp.Stdout == nil {
			return io.Discard
		}
		return p.interp.Stdout
	}
	if p.sb != nil {
		return p.sb
	}
	return p.w
}

// WriteString writes s to the port.
func (p *Port) WriteString(s string) error {
	if p.closed {
		return errors.New("port is closed")
	}
	_, err := io.WriteString(p.writer(), s)
	return err
}

// fill reads more input; it reports false at end of input.
func (p *Port) fill() bool {
	if p.srcEOF || p.src == nil {
		return false
	}
	var chunk [4096]byte
	for {
		n, err := p.src.Read(chunk[:])
		if n > 0 {
			p.buf = p.buf[p.off:] + string(chunk[:n])
			p.off = 0
		}
		if err != nil {
			p.srcEOF = true
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
}

// readRune returns the next character; ok is false at end of input.
func (p *Port) readRune(consume bool) (rune, bool) {
	for !utf8.FullRuneInString(p.buf[p.off:]) || p.off >= len(p.buf) {
		if !p.fill() {
			if p.off >= len(p.buf) {
				return 0, false
			}
			break
		}
	}
	r, size := utf8.DecodeRuneInString(p.buf[p.off:])
	if consume {
		p.off += size
	}
	return r, true
}

// readLine returns the next line without its line ending.
func (p *Port) readLine() (string, bool) {
	for {
		rest := p.buf[p.off:]
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			p.off += i + 1
			return strings.TrimSuffix(rest[:i], "\r"), true
		}
		if !p.fill() {
			if rest == "" {
				return "", false
			}
			p.off = len(p.buf)
			return rest, true
		}
	}
}

// readChars reads up to k characters.
func (p *Port) readChars(k int) (string, bool) {
	var b strings.Builder
	for i := 0; i < k; i++ {
		r, ok := p.readRune(true)
		if !ok {
			break
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 && k > 0 {
		return "", false
	}
	return b.String(), true
}

// readDatum reads one datum with the core reader.
func (p *Port) readDatum() (Value, error) {
	for {
		rest := p.buf[p.off:]
		r := NewReader(rest, p.name)
		v, err := r.Next()
		streamMore := !p.srcEOF && p.src != nil
		if err != nil {
			if IsIncomplete(err) && streamMore && p.fill() {
				continue
			}
			return nil, err
		}
		if streamMore && (v == EOF || r.Offset() >= len(rest)) {
			// The datum may continue in input not read yet.
			if p.fill() {
				continue
			}
		}
		p.off += r.Offset()
		return v, nil
	}
}

func argPort(proc string, v Value, wantOutput bool) (*Port, error) {
	p, ok := v.(*Port)
	if !ok || (wantOutput && !p.output) || (!wantOutput && !p.input) {
		if wantOutput {
			return nil, WrongType(proc, "an output port", v)
		}
		return nil, WrongType(proc, "an input port", v)
	}
	if p.closed {
		return nil, Errorf("%s: port is closed: %s", proc, errString(v))
	}
	return p, nil
}

// libState is the per-interpreter part of the library: the current ports and
// the gensym counter. installPorts creates it and binds the procedures that
// need it as closures over it.
type libState struct {
	out, errOut, inPort *Parameter
	gensym              int
}

func (st *libState) outPort(in *Interp, proc string, args []Value, i int) (*Port, error) {
	if len(args) > i {
		return argPort(proc, args[i], true)
	}
	v := st.out.Get(in)
	p, ok := v.(*Port)
	if !ok || !p.output {
		return nil, Errorf("%s: the current output port is not an output port: %s", proc, errString(v))
	}
	return p, nil
}

func (st *libState) inputPort(in *Interp, proc string, args []Value, i int) (*Port, error) {
	if len(args) > i {
		return argPort(proc, args[i], false)
	}
	v := st.inPort.Get(in)
	p, ok := v.(*Port)
	if !ok || !p.input {
		return nil, Errorf("%s: the current input port is not an input port: %s", proc, errString(v))
	}
	return p, nil
}

func emit(proc string, p *Port, s string) (Value, error) {
	if err := p.WriteString(s); err != nil {
		return nil, Errorf("%s: %v", proc, err)
	}
	return Void, nil
}

// withParam calls thunk with the parameter p bound to v, restoring the old
// value however thunk exits.
func withParam(in *Interp, p *Parameter, v Value, thunk func() (Value, error)) (Value, error) {
	old := p.value
	p.value = v
	defer func() { p.value = old }()
	return thunk()
}

// installPorts creates the interpreter's current-output-port,
// current-error-port and current-input-port parameters and binds the
// procedures that use them.
func installPorts(in *Interp) {
	stdout := &Port{name: "stdout", output: true, interp: in}
	stderr := &Port{name: "stderr", output: true, w: os.Stderr}
	stdin := &Port{name: "stdin", input: true, src: os.Stdin}
	st := &libState{
		out:    NewParameter(stdout, nil),
		errOut: NewParameter(stderr, nil),
		inPort: NewParameter(stdin, nil),
	}
	in.Define("current-output-port", st.out)
	in.Define("current-error-port", st.errOut)
	in.Define("current-input-port", st.inPort)
	for _, p := range interpPrimitives(st) {
		in.Register(p)
	}
}

func interpPrimitives(st *libState) []*Primitive {
	write := prim("write", 1, 2, "(write obj [port]) writes obj so that read can read it back", func(in *Interp, args []Value) (Value, error) {
		p, err := st.outPort(in, "write", args, 1)
		if err != nil {
			return nil, err
		}
		return emit("write", p, WriteString(args[0]))
	})
	gensym := prim("gensym", 0, 1, "(gensym [prefix]) returns a fresh symbol (unique within this interpreter)", func(in *Interp, args []Value) (Value, error) {
		prefix := "g"
		if len(args) == 1 {
			switch x := args[0].(type) {
			case *String:
				prefix = x.S
			case Symbol:
				prefix = string(x)
			default:
				return nil, WrongType("gensym", "a string or symbol prefix", x)
			}
		}
		st.gensym++
		return Symbol(prefix + itoa(st.gensym)), nil
	})
	return []*Primitive{
		gensym,
		alias("generate-symbol", gensym),
		write,
		alias("write-shared", write),
		alias("write-simple", write),
		prim("display", 1, 2, "(display obj [port]) writes obj for people: strings and characters as their contents", func(in *Interp, args []Value) (Value, error) {
			p, err := st.outPort(in, "display", args, 1)
			if err != nil {
				return nil, err
			}
			return emit("display", p, DisplayString(args[0]))
		}),
		prim("newline", 0, 1, "(newline [port])", func(in *Interp, args []Value) (Value, error) {
			p, err := st.outPort(in, "newline", args, 0)
			if err != nil {
				return nil, err
			}
			return emit("newline", p, "\n")
		}),
		prim("write-string", 1, 4, "(write-string s [port [start [end]]])", func(in *Interp, args []Value) (Value, error) {
			s, err := argString("write-string", args[0])
			if err != nil {
				return nil, err
			}
			p, err := st.outPort(in, "write-string", args, 1)
			if err != nil {
				return nil, err
			}
			text := s.S
			if len(args) > 2 {
				start, end, err := argRange("write-string", args, 2, runeCount(s.S))
				if err != nil {
					return nil, err
				}
				text = substringChars(s.S, start, end)
			}
			return emit("write-string", p, text)
		}),
		prim("write-char", 1, 2, "(write-char char [port])", func(in *Interp, args []Value) (Value, error) {
			c, err := argChar("write-char", args[0])
			if err != nil {
				return nil, err
			}
			p, err := st.outPort(in, "write-char", args, 1)
			if err != nil {
				return nil, err
			}
			return emit("write-char", p, string(c))
		}),
		prim("flush-output-port", 0, 1, "(flush-output-port [port])", func(in *Interp, args []Value) (Value, error) {
			p, err := st.outPort(in, "flush-output-port", args, 0)
			if err != nil {
				return nil, err
			}
			if f, ok := p.writer().(interface{ Flush() error }); ok {
				if err := f.Flush(); err != nil {
					return nil, Errorf("flush-output-port: %v", err)
				}
			}
			return Void, nil
		}),
		prim("read-char", 0, 1, "(read-char [port]) returns the next character or the eof object", func(in *Interp, args []Value) (Value, error) {
			p, err := st.inputPort(in, "read-char", args, 0)
			if err != nil {
				return nil, err
			}
			r, ok := p.readRune(true)
			if !ok {
				return EOF, nil
			}
			return Char(r), nil
		}),
		prim("peek-char", 0, 1, "(peek-char [port]) returns the next character without consuming it, or the eof object", func(in *Interp, args []Value) (Value, error) {
			p, err := st.inputPort(in, "peek-char", args, 0)
			if err != nil {
				return nil, err
			}
			r, ok := p.readRune(false)
			if !ok {
				return EOF, nil
			}
			return Char(r), nil
		}),
		prim("char-ready?", 0, 1, "(char-ready? [port])", func(in *Interp, args []Value) (Value, error) {
			p, err := st.inputPort(in, "char-ready?", args, 0)
			if err != nil {
				return nil, err
			}
			return p.off < len(p.buf) || p.srcEOF || p.src == nil, nil
		}),
		prim("read-line", 0, 1, "(read-line [port]) returns the next line without its line ending, or the eof object", func(in *Interp, args []Value) (Value, error) {
			p, err := st.inputPort(in, "read-line", args, 0)
			if err != nil {
				return nil, err
			}
			line, ok := p.readLine()
			if !ok {
				return EOF, nil
			}
			return NewString(line), nil
		}),
		prim("read-string", 1, 2, "(read-string k [port]) reads up to k characters, or returns the eof object", func(in *Interp, args []Value) (Value, error) {
			kv, pv := args[0], []Value{}
			if len(args) == 2 {
				if _, ok := args[0].(*Port); ok { // (read-string port k), as in some Schemes
					kv = args[1]
					pv = args[:1]
				} else {
					pv = args[1:]
				}
			}
			k, ok := kv.(int)
			if !ok || k < 0 {
				return nil, WrongType("read-string", "a non-negative exact integer", kv)
			}
			p, err := st.inputPort(in, "read-string", pv, 0)
			if err != nil {
				return nil, err
			}
			s, ok := p.readChars(k)
			if !ok {
				return EOF, nil
			}
			return NewString(s), nil
		}),
		prim("read", 0, 1, "(read [port]) reads one datum, or returns the eof object", func(in *Interp, args []Value) (Value, error) {
			p, err := st.inputPort(in, "read", args, 0)
			if err != nil {
				return nil, err
			}
			return p.readDatum()
		}),
		prim("with-output-to-string", 1, 1, "(with-output-to-string thunk) returns what thunk writes to the current output port", func(in *Interp, args []Value) (Value, error) {
			if err := argProc("with-output-to-string", args[0]); err != nil {
				return nil, err
			}
			p := NewOutputStringPort()
			_, err := withParam(in, st.out, p, func() (Value, error) { return in.Apply(args[0], nil) })
			if err != nil {
				return nil, err
			}
			return NewString(p.String()), nil
		}),
		prim("with-output-to-file", 2, 2, "(with-output-to-file path thunk) calls thunk with the current output port writing to the file", func(in *Interp, args []Value) (Value, error) {
			if err := argProc("with-output-to-file", args[1]); err != nil {
				return nil, err
			}
			p, err := openFilePort(in, "with-output-to-file", args[0], true)
			if err != nil {
				return nil, err
			}
			v, err := withParam(in, st.out, p, func() (Value, error) { return in.Apply(args[1], nil) })
			if cerr := p.Close(); err == nil && cerr != nil {
				return nil, cerr
			}
			return v, err
		}),
		prim("with-input-from-file", 2, 2, "(with-input-from-file path thunk) calls thunk with the current input port reading the file", func(in *Interp, args []Value) (Value, error) {
			if err := argProc("with-input-from-file", args[1]); err != nil {
				return nil, err
			}
			p, err := openFilePort(in, "with-input-from-file", args[0], false)
			if err != nil {
				return nil, err
			}
			v, err := withParam(in, st.inPort, p, func() (Value, error) { return in.Apply(args[1], nil) })
			p.Close()
			return v, err
		}),
		prim("with-input-from-string", 2, 2, "(with-input-from-string s thunk) calls thunk with the current input port reading s", func(in *Interp, args []Value) (Value, error) {
			s, err := argString("with-input-from-string", args[0])
			if err != nil {
				return nil, err
			}
			if err := argProc("with-input-from-string", args[1]); err != nil {
				return nil, err
			}
			return withParam(in, st.inPort, NewInputStringPort(s.S), func() (Value, error) { return in.Apply(args[1], nil) })
		}),
		prim("format", 1, -1, "(format dest fmt arg ...) with ~a (display) ~s (write) ~d (number) ~x ~o ~b ~% (newline) ~~; dest #f returns a string, #t writes to the current output port, or a port; (format fmt arg ...) returns a string", func(in *Interp, args []Value) (Value, error) {
			var dest *Port
			switch d := args[0].(type) {
			case *String:
				s, err := formatString("format", d.S, args[1:])
				if err != nil {
					return nil, err
				}
				return NewString(s), nil
			case bool:
				if d {
					p, err := st.outPort(in, "format", nil, 0)
					if err != nil {
						return nil, err
					}
					dest = p
				}
			case *Port:
				p, err := argPort("format", d, true)
				if err != nil {
					return nil, err
				}
				dest = p
			default:
				return nil, WrongType("format", "#f, #t, a port or a format string", d)
			}
			if len(args) < 2 {
				return nil, Errorf("format: missing format string")
			}
			f, err := argString("format", args[1])
			if err != nil {
				return nil, err
			}
			s, err := formatString("format", f.S, args[2:])
			if err != nil {
				return nil, err
			}
			if dest == nil {
				return NewString(s), nil
			}
			return emit("format", dest, s)
		}),
		prim("json-write", 1, 2, "(json-write obj [port]) writes obj as JSON; see string->json for the mapping", func(in *Interp, args []Value) (Value, error) {
			p, err := st.outPort(in, "json-write", args, 1)
			if err != nil {
				return nil, err
			}
			s, err := jsonEncode("json-write", args[0])
			if err != nil {
				return nil, err
			}
			return emit("json-write", p, s)
		}),
		prim("json-read", 0, 1, "(json-read [port]) reads one JSON value, or returns the eof object", func(in *Interp, args []Value) (Value, error) {
			p, err := st.inputPort(in, "json-read", args, 0)
			if err != nil {
				return nil, err
			}
			return p.readJSON()
		}),
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return string(b[i:])
}

func portPrimitives() []*Primitive {
	return []*Primitive{
		prim("open-input-string", 1, 1, "(open-input-string s)", func(in *Interp, args []Value) (Value, error) {
			s, err := argString("open-input-string", args[0])
			if err != nil {
				return nil, err
			}
			return NewInputStringPort(s.S), nil
		}),
		prim("open-output-string", 0, 0, "(open-output-string)", func(in *Interp, args []Value) (Value, error) {
			return NewOutputStringPort(), nil
		}),
		prim("get-output-string", 1, 1, "(get-output-string port) returns what was written to a string output port", func(in *Interp, args []Value) (Value, error) {
			p, ok := args[0].(*Port)
			if !ok || p.sb == nil {
				return nil, WrongType("get-output-string", "a string output port", args[0])
			}
			return NewString(p.sb.String()), nil
		}),
		prim("call-with-output-string", 1, 1, "(call-with-output-string proc) calls (proc port) and returns what proc wrote", func(in *Interp, args []Value) (Value, error) {
			if err := argProc("call-with-output-string", args[0]); err != nil {
				return nil, err
			}
			p := NewOutputStringPort()
			if _, err := in.Apply(args[0], []Value{p}); err != nil {
				return nil, err
			}
			return NewString(p.String()), nil
		}),
		prim("string->datum", 1, 1, "(string->datum s) reads the one datum in s; an error if s holds none or several", func(in *Interp, args []Value) (Value, error) {
			s, err := argString("string->datum", args[0])
			if err != nil {
				return nil, err
			}
			vals, err := Read(s.S, "string->datum")
			if err != nil {
				return nil, err
			}
			if len(vals) != 1 {
				return nil, &ErrorObject{Message: fmt.Sprintf("string->datum: want exactly one datum, found %d in %s", len(vals), writeStringLit(s.S)), Kind: "read"}
			}
			return vals[0], nil
		}),
		prim("datum->string", 1, 1, "(datum->string obj) is what write would print", func(in *Interp, args []Value) (Value, error) {
			return NewString(WriteString(args[0])), nil
		}),
		predPrim("port?", func(v Value) bool { _, ok := v.(*Port); return ok }),
		predPrim("input-port?", func(v Value) bool { p, ok := v.(*Port); return ok && p.input }),
		predPrim("output-port?", func(v Value) bool { p, ok := v.(*Port); return ok && p.output }),
		predPrim("textual-port?", func(v Value) bool { _, ok := v.(*Port); return ok }),
		predPrim("binary-port?", func(v Value) bool { return false }),
		prim("input-port-open?", 1, 1, "(input-port-open? port)", func(in *Interp, args []Value) (Value, error) {
			p, ok := args[0].(*Port)
			if !ok || !p.input {
				return nil, WrongType("input-port-open?", "an input port", args[0])
			}
			return !p.closed, nil
		}),
		prim("output-port-open?", 1, 1, "(output-port-open? port)", func(in *Interp, args []Value) (Value, error) {
			p, ok := args[0].(*Port)
			if !ok || !p.output {
				return nil, WrongType("output-port-open?", "an output port", args[0])
			}
			return !p.closed, nil
		}),
		closePrim("close-port"),
		closePrim("close-input-port"),
		closePrim("close-output-port"),
	}
}

func closePrim(name string) *Primitive {
	return prim(name, 1, 1, "("+name+" port) closes the port; closing twice is harmless", func(in *Interp, args []Value) (Value, error) {
		p, ok := args[0].(*Port)
		if !ok {
			return nil, WrongType(name, "a port", args[0])
		}
		return Void, p.Close()
	})
}

// Close closes the port (and the file under a file port). Closing twice is
// harmless.
func (p *Port) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	if p.closer != nil {
		if err := p.closer.Close(); err != nil {
			return err
		}
	}
	return nil
}

func openFilePort(in *Interp, proc string, v Value, output bool) (*Port, error) {
	name, err := argString(proc, v)
	if err != nil {
		return nil, err
	}
	if output {
		f, err := in.files().Create(name.S)
		if err != nil {
			return nil, err
		}
		return &Port{name: name.S, output: true, w: f, closer: f}, nil
	}
	f, err := in.files().Open(name.S)
	if err != nil {
		return nil, err
	}
	return &Port{name: name.S, input: true, src: f, closer: f}, nil
}

// callWithPort calls proc with port and closes the port when proc returns
// normally or with an error.
func callWithPort(in *Interp, port *Port, proc Value) (Value, error) {
	v, err := in.Apply(proc, []Value{port})
	if cerr := port.Close(); err == nil && cerr != nil {
		return nil, cerr
	}
	return v, err
}

func filePrimitives() []*Primitive {
	return []*Primitive{
		prim("open-input-file", 1, 1, "(open-input-file path)", func(in *Interp, args []Value) (Value, error) {
			return openFilePort(in, "open-input-file", args[0], false)
		}),
		prim("open-output-file", 1, 1, "(open-output-file path) creates or truncates the file", func(in *Interp, args []Value) (Value, error) {
			return openFilePort(in, "open-output-file", args[0], true)
		}),
		prim("call-with-input-file", 2, 2, "(call-with-input-file path proc) calls (proc port) and closes the port", func(in *Interp, args []Value) (Value, error) {
			if err := argProc("call-with-input-file", args[1]); err != nil {
				return nil, err
			}
			p, err := openFilePort(in, "call-with-input-file", args[0], false)
			if err != nil {
				return nil, err
			}
			return callWithPort(in, p, args[1])
		}),
		prim("call-with-output-file", 2, 2, "(call-with-output-file path proc) calls (proc port) and closes the port", func(in *Interp, args []Value) (Value, error) {
			if err := argProc("call-with-output-file", args[1]); err != nil {
				return nil, err
			}
			p, err := openFilePort(in, "call-with-output-file", args[0], true)
			if err != nil {
				return nil, err
			}
			return callWithPort(in, p, args[1])
		}),
		prim("call-with-port", 2, 2, "(call-with-port port proc) calls (proc port) and closes the port", func(in *Interp, args []Value) (Value, error) {
			p, ok := args[0].(*Port)
			if !ok {
				return nil, WrongType("call-with-port", "a port", args[0])
			}
			if err := argProc("call-with-port", args[1]); err != nil {
				return nil, err
			}
			return callWithPort(in, p, args[1])
		}),
		prim("file-exists?", 1, 1, "(file-exists? path)", func(in *Interp, args []Value) (Value, error) {
			name, err := argString("file-exists?", args[0])
			if err != nil {
				return nil, err
			}
			_, err = in.files().Stat(name.S)
			var no *noFiles
			if errors.As(err, &no) {
				return nil, err
			}
			return err == nil, nil
		}),
		prim("delete-file", 1, 1, "(delete-file path)", func(in *Interp, args []Value) (Value, error) {
			name, err := argString("delete-file", args[0])
			if err != nil {
				return nil, err
			}
			if err := in.files().Remove(name.S); err != nil {
				return nil, err
			}
			return Void, nil
		}),
	}
}
