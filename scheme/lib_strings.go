package scheme

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Strings are UTF-8 Go strings inside a mutable *String; indices count
// characters (code points), not bytes. ASCII strings take fast paths.

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// byteOffset returns the byte offset of character index i in s (i may equal
// the length).
func byteOffset(s string, i int) int {
	if i <= len(s) && isASCII(s[:i]) {
		return i
	}
	n := 0
	for off := range s {
		if n == i {
			return off
		}
		n++
	}
	return len(s)
}

// substringChars returns characters [start, end) of s; the indices must have
// been checked.
func substringChars(s string, start, end int) string {
	if end <= len(s) && isASCII(s[:end]) {
		return s[start:end]
	}
	b := byteOffset(s, start)
	e := b + byteOffset(s[b:], end-start)
	return s[b:e]
}

// argSubstring parses (proc s [start [end]]) with s at args[i] and returns
// the selected part.
func argSubstring(proc string, args []Value, i int) (string, error) {
	s, err := argString(proc, args[i])
	if err != nil {
		return "", err
	}
	if len(args) <= i+1 {
		return s.S, nil
	}
	start, end, err := argRange(proc, args, i+1, runeCount(s.S))
	if err != nil {
		return "", err
	}
	return substringChars(s.S, start, end), nil
}

func strCmp(name string, fold bool, test func(c int) bool) *Primitive {
	return prim(name, 1, -1, "("+name+" s1 s2 ...)", func(in *Interp, args []Value) (Value, error) {
		ss := make([]string, len(args))
		for i, a := range args {
			s, err := argString(name, a)
			if err != nil {
				return nil, err
			}
			ss[i] = s.S
			if fold {
				ss[i] = foldString(s.S)
			}
		}
		for i := 0; i+1 < len(ss); i++ {
			if !test(strings.Compare(ss[i], ss[i+1])) {
				return false, nil
			}
		}
		return true, nil
	})
}

func foldString(s string) string {
	return strings.ToLower(strings.ToUpper(s))
}

// charMatcher turns a char-or-predicate argument (or none: whitespace) into
// a Go test.
func charMatcher(in *Interp, proc string, args []Value, i int) (func(r rune) bool, *error, error) {
	var cerr error
	if len(args) <= i {
		return unicode.IsSpace, &cerr, nil
	}
	switch m := args[i].(type) {
	case Char:
		return func(r rune) bool { return r == rune(m) }, &cerr, nil
	case *String:
		set := m.S
		return func(r rune) bool { return strings.ContainsRune(set, r) }, &cerr, nil
	}
	if !IsProcedure(args[i]) {
		return nil, nil, WrongType(proc, "a character, string of characters or predicate", args[i])
	}
	pred := args[i]
	return func(r rune) bool {
		if cerr != nil {
			return false
		}
		v, err := in.Apply(pred, []Value{Char(r)})
		if err != nil {
			cerr = err
			return false
		}
		return IsTrue(v)
	}, &cerr, nil
}

func trimPrim(name string, left, right bool) *Primitive {
	return prim(name, 1, 2, "("+name+" s [char/pred]) removes whitespace (or matching characters)", func(in *Interp, args []Value) (Value, error) {
		s, err := argString(name, args[0])
		if err != nil {
			return nil, err
		}
		match, cerr, err := charMatcher(in, name, args, 1)
		if err != nil {
			return nil, err
		}
		r := s.S
		if left {
			r = strings.TrimLeftFunc(r, match)
		}
		if right {
			r = strings.TrimRightFunc(r, match)
		}
		if *cerr != nil {
			return nil, *cerr
		}
		return NewString(r), nil
	})
}

func padPrim(name string, right bool) *Primitive {
	return prim(name, 2, 3, "("+name+" s n [char]) pads or truncates s to n characters", func(in *Interp, args []Value) (Value, error) {
		s, err := argString(name, args[0])
		if err != nil {
			return nil, err
		}
		n, ok := args[1].(int)
		if !ok || n < 0 {
			return nil, WrongType(name, "a non-negative exact integer", args[1])
		}
		if err := in.checkAlloc(name, n, 1); err != nil {
			return nil, err
		}
		pad := ' '
		if len(args) == 3 {
			if pad, err = argChar(name, args[2]); err != nil {
				return nil, err
			}
		}
		l := runeCount(s.S)
		switch {
		case l == n:
			return NewString(s.S), nil
		case l > n:
			if right {
				return NewString(substringChars(s.S, 0, n)), nil
			}
			return NewString(substringChars(s.S, l-n, l)), nil
		}
		fill := strings.Repeat(string(pad), n-l)
		if right {
			return NewString(s.S + fill), nil
		}
		return NewString(fill + s.S), nil
	})
}

// stringMapArgs gathers the i-th characters of several strings.
func stringsAsRunes(proc string, vals []Value) ([][]rune, int, error) {
	rs := make([][]rune, len(vals))
	shortest := -1
	for i, v := range vals {
		s, err := argString(proc, v)
		if err != nil {
			return nil, 0, err
		}
		rs[i] = []rune(s.S)
		if shortest < 0 || len(rs[i]) < shortest {
			shortest = len(rs[i])
		}
	}
	return rs, shortest, nil
}

func stringPrimitives() []*Primitive {
	return []*Primitive{
		predPrim("string?", func(v Value) bool { _, ok := v.(*String); return ok }),
		prim("make-string", 1, 2, "(make-string k [char])", func(in *Interp, args []Value) (Value, error) {
			n, ok := args[0].(int)
			if !ok || n < 0 {
				return nil, WrongType("make-string", "a non-negative exact integer", args[0])
			}
			if err := in.checkAlloc("make-string", n, 1); err != nil {
				return nil, err
			}
			c := ' '
			if len(args) == 2 {
				var err error
				if c, err = argChar("make-string", args[1]); err != nil {
					return nil, err
				}
			}
			return NewString(strings.Repeat(string(c), n)), nil
		}),
		prim("string", 0, -1, "(string char ...)", func(in *Interp, args []Value) (Value, error) {
			var b strings.Builder
			for _, a := range args {
				r, err := argChar("string", a)
				if err != nil {
					return nil, err
				}
				b.WriteRune(r)
			}
			return NewString(b.String()), nil
		}),
		prim("string-length", 1, 1, "(string-length s) in characters", func(in *Interp, args []Value) (Value, error) {
			s, err := argString("string-length", args[0])
			if err != nil {
				return nil, err
			}
			return runeCount(s.S), nil
		}),
		prim("string-ref", 2, 2, "(string-ref s k)", func(in *Interp, args []Value) (Value, error) {
			s, err := argString("string-ref", args[0])
			if err != nil {
				return nil, err
			}
			k, ok := args[1].(int)
			if !ok {
				return nil, WrongType("string-ref", "an exact integer", args[1])
			}
			if k >= 0 && k < len(s.S) && isASCII(s.S[:k+1]) {
				return Char(s.S[k]), nil
			}
			n := 0
			for _, r := range s.S {
				if n == k {
					return Char(r), nil
				}
				n++
			}
			return nil, Errorf("string-ref: index out of range: %d (length %d)", k, n)
		}),
		prim("string-set!", 3, 3, "(string-set! s k char)", func(in *Interp, args []Value) (Value, error) {
			s, err := argString("string-set!", args[0])
			if err != nil {
				return nil, err
			}
			k, err := argIndex("string-set!", args[1], runeCount(s.S), false)
			if err != nil {
				return nil, err
			}
			c, err := argChar("string-set!", args[2])
			if err != nil {
				return nil, err
			}
			b := byteOffset(s.S, k)
			_, size := utf8.DecodeRuneInString(s.S[b:])
			s.S = s.S[:b] + string(c) + s.S[b+size:]
			return Void, nil
		}),
		prim("substring", 2, 3, "(substring s start [end])", func(in *Interp, args []Value) (Value, error) {
			r, err := argSubstring("substring", args, 0)
			if err != nil {
				return nil, err
			}
			return NewString(r), nil
		}),
		prim("string-append", 0, -1, "(string-append s ...)", func(in *Interp, args []Value) (Value, error) {
			if len(args) == 2 {
				a, ok1 := args[0].(*String)
				b, ok2 := args[1].(*String)
				if ok1 && ok2 && len(a.S)+len(b.S) <= maxStringBytes {
					in.charge(len(a.S) + len(b.S))
					return NewString(a.S + b.S), nil
				}
			}
			n := 0
			for _, a := range args {
				s, err := argString("string-append", a)
				if err != nil {
					return nil, err
				}
				n += len(s.S)
			}
			if n > maxStringBytes {
				return nil, Errorf("string-append: result too large: %d bytes (the limit is %d)", n, maxStringBytes)
			}
			in.charge(n)
			var b strings.Builder
			b.Grow(n)
			for _, a := range args {
				b.WriteString(a.(*String).S)
			}
			return NewString(b.String()), nil
		}),
		prim("string-copy", 1, 3, "(string-copy s [start [end]])", func(in *Interp, args []Value) (Value, error) {
			r, err := argSubstring("string-copy", args, 0)
			if err != nil {
				return nil, err
			}
			return NewString(r), nil
		}),
		prim("string-copy!", 3, 5, "(string-copy! to at from [start [end]])", func(in *Interp, args []Value) (Value, error) {
			to, err := argString("string-copy!", args[0])
			if err != nil {
				return nil, err
			}
			tr := []rune(to.S)
			at, err := argIndex("string-copy!", args[1], len(tr), true)
			if err != nil {
				return nil, err
			}
			from, err := argSubstring("string-copy!", args, 2)
			if err != nil {
				return nil, err
			}
			fr := []rune(from)
			if at+len(fr) > len(tr) {
				return nil, Errorf("string-copy!: %d characters do not fit at index %d of a string of length %d", len(fr), at, len(tr))
			}
			copy(tr[at:], fr)
			to.S = string(tr)
			return Void, nil
		}),
		strCmp("string=?", false, func(c int) bool { return c == 0 }),
		strCmp("string<?", false, func(c int) bool { return c < 0 }),
		strCmp("string>?", false, func(c int) bool { return c > 0 }),
		strCmp("string<=?", false, func(c int) bool { return c <= 0 }),
		strCmp("string>=?", false, func(c int) bool { return c >= 0 }),
		strCmp("string-ci=?", true, func(c int) bool { return c == 0 }),
		strCmp("string-ci<?", true, func(c int) bool { return c < 0 }),
		strCmp("string-ci>?", true, func(c int) bool { return c > 0 }),
		strCmp("string-ci<=?", true, func(c int) bool { return c <= 0 }),
		strCmp("string-ci>=?", true, func(c int) bool { return c >= 0 }),
		prim("string->list", 1, 3, "(string->list s [start [end]])", func(in *Interp, args []Value) (Value, error) {
			r, err := argSubstring("string->list", args, 0)
			if err != nil {
				return nil, err
			}
			var vals []Value
			for _, c := range r {
				vals = append(vals, Char(c))
			}
			return List(vals...), nil
		}),
		prim("list->string", 1, 1, "(list->string list-of-chars)", func(in *Interp, args []Value) (Value, error) {
			vals, err := argList("list->string", args[0])
			if err != nil {
				return nil, err
			}
			var b strings.Builder
			for _, v := range vals {
				r, err := argChar("list->string", v)
				if err != nil {
					return nil, err
				}
				b.WriteRune(r)
			}
			return NewString(b.String()), nil
		}),
		prim("string->vector", 1, 3, "(string->vector s [start [end]])", func(in *Interp, args []Value) (Value, error) {
			r, err := argSubstring("string->vector", args, 0)
			if err != nil {
				return nil, err
			}
			var vals []Value
			for _, c := range r {
				vals = append(vals, Char(c))
			}
			return &Vector{Items: vals}, nil
		}),
		prim("vector->string", 1, 3, "(vector->string vec [start [end]])", func(in *Interp, args []Value) (Value, error) {
			v, ok := args[0].(*Vector)
			if !ok {
				return nil, WrongType("vector->string", "a vector", args[0])
			}
			start, end, err := argRange("vector->string", args, 1, len(v.Items))
			if err != nil {
				return nil, err
			}
			var b strings.Builder
			for _, x := range v.Items[start:end] {
				r, err := argChar("vector->string", x)
				if err != nil {
					return nil, err
				}
				b.WriteRune(r)
			}
			return NewString(b.String()), nil
		}),
		prim("string-upcase", 1, 1, "(string-upcase s)", func(in *Interp, args []Value) (Value, error) {
			s, err := argString("string-upcase", args[0])
			if err != nil {
				return nil, err
			}
			return NewString(strings.ToUpper(s.S)), nil
		}),
		prim("string-downcase", 1, 1, "(string-downcase s)", func(in *Interp, args []Value) (Value, error) {
			s, err := argString("string-downcase", args[0])
			if err != nil {
				return nil, err
			}
			return NewString(strings.ToLower(s.S)), nil
		}),
		prim("string-foldcase", 1, 1, "(string-foldcase s)", func(in *Interp, args []Value) (Value, error) {
			s, err := argString("string-foldcase", args[0])
			if err != nil {
				return nil, err
			}
			return NewString(foldString(s.S)), nil
		}),
		prim("string-fill!", 2, 4, "(string-fill! s char [start [end]])", func(in *Interp, args []Value) (Value, error) {
			s, err := argString("string-fill!", args[0])
			if err != nil {
				return nil, err
			}
			c, err := argChar("string-fill!", args[1])
			if err != nil {
				return nil, err
			}
			rs := []rune(s.S)
			start, end, err := argRange("string-fill!", args, 2, len(rs))
			if err != nil {
				return nil, err
			}
			for i := start; i < end; i++ {
				rs[i] = c
			}
			s.S = string(rs)
			return Void, nil
		}),
		prim("string-map", 2, -1, "(string-map proc s1 s2 ...) proc returns a character", func(in *Interp, args []Value) (Value, error) {
			if err := argProc("string-map", args[0]); err != nil {
				return nil, err
			}
			rs, n, err := stringsAsRunes("string-map", args[1:])
			if err != nil {
				return nil, err
			}
			var b strings.Builder
			for i := 0; i < n; i++ {
				call := make([]Value, len(rs))
				for j := range rs {
					call[j] = Char(rs[j][i])
				}
				r, err := in.Apply(args[0], call)
				if err != nil {
					return nil, err
				}
				c, ok := r.(Char)
				if !ok {
					return nil, Errorf("string-map: procedure returned a non-character: %s", errString(r))
				}
				b.WriteRune(rune(c))
			}
			return NewString(b.String()), nil
		}),
		prim("string-for-each", 2, -1, "(string-for-each proc s1 s2 ...)", func(in *Interp, args []Value) (Value, error) {
			if err := argProc("string-for-each", args[0]); err != nil {
				return nil, err
			}
			rs, n, err := stringsAsRunes("string-for-each", args[1:])
			if err != nil {
				return nil, err
			}
			for i := 0; i < n; i++ {
				call := make([]Value, len(rs))
				for j := range rs {
					call[j] = Char(rs[j][i])
				}
				if _, err := in.Apply(args[0], call); err != nil {
					return nil, err
				}
			}
			return Void, nil
		}),
		predPrim("string-null?", func(v Value) bool { s, ok := v.(*String); return ok && s.S == "" }),
		prim("string-index", 2, 2, "(string-index s char/pred) returns the index of the first match, or #f", func(in *Interp, args []Value) (Value, error) {
			s, err := argString("string-index", args[0])
			if err != nil {
				return nil, err
			}
			match, cerr, err := charMatcher(in, "string-index", args, 1)
			if err != nil {
				return nil, err
			}
			i := 0
			for _, r := range s.S {
				if match(r) {
					return i, nil
				}
				if *cerr != nil {
					return nil, *cerr
				}
				i++
			}
			return false, nil
		}),
		prim("string-rindex", 2, 2, "(string-rindex s char/pred) returns the index of the last match, or #f", func(in *Interp, args []Value) (Value, error) {
			s, err := argString("string-rindex", args[0])
			if err != nil {
				return nil, err
			}
			match, cerr, err := charMatcher(in, "string-rindex", args, 1)
			if err != nil {
				return nil, err
			}
			rs := []rune(s.S)
			for i := len(rs) - 1; i >= 0; i-- {
				if match(rs[i]) {
					return i, nil
				}
				if *cerr != nil {
					return nil, *cerr
				}
			}
			return false, nil
		}),
		prim("string-contains", 2, 2, "(string-contains s pattern) returns the index where pattern first occurs in s, or #f", func(in *Interp, args []Value) (Value, error) {
			s, err := argString("string-contains", args[0])
			if err != nil {
				return nil, err
			}
			p, err := argString("string-contains", args[1])
			if err != nil {
				return nil, err
			}
			i := strings.Index(s.S, p.S)
			if i < 0 {
				return false, nil
			}
			return runeCount(s.S[:i]), nil
		}),
		prim("string-search-all", 2, 2, "(string-search-all pattern s) returns the list of indices where pattern occurs in s", func(in *Interp, args []Value) (Value, error) {
			p, err := argString("string-search-all", args[0])
			if err != nil {
				return nil, err
			}
			s, err := argString("string-search-all", args[1])
			if err != nil {
				return nil, err
			}
			if p.S == "" {
				return nil, Errorf("string-search-all: empty pattern")
			}
			var out []Value
			for off := 0; ; {
				i := strings.Index(s.S[off:], p.S)
				if i < 0 {
					break
				}
				out = append(out, runeCount(s.S[:off+i]))
				_, size := utf8.DecodeRuneInString(s.S[off+i:])
				off += i + size
			}
			return List(out...), nil
		}),
		prim("string-join", 1, 2, "(string-join list-of-strings [delimiter]) joins with delimiter (default \" \")", func(in *Interp, args []Value) (Value, error) {
			vals, err := argList("string-join", args[0])
			if err != nil {
				return nil, err
			}
			delim := " "
			if len(args) == 2 {
				d, err := argString("string-join", args[1])
				if err != nil {
					return nil, err
				}
				delim = d.S
			}
			var b strings.Builder
			for i, v := range vals {
				s, err := argString("string-join", v)
				if err != nil {
					return nil, err
				}
				if i > 0 {
					b.WriteString(delim)
				}
				b.WriteString(s.S)
			}
			return NewString(b.String()), nil
		}),
		prim("string-split", 1, 3, "(string-split s [delimiter [limit]]) splits at every occurrence of the delimiter (a character or string), keeping empty fields; without a delimiter it splits at runs of whitespace and drops empty fields", func(in *Interp, args []Value) (Value, error) {
			s, err := argString("string-split", args[0])
			if err != nil {
				return nil, err
			}
			var parts []string
			if len(args) == 1 {
				parts = strings.Fields(s.S)
			} else {
				var delim string
				switch d := args[1].(type) {
				case Char:
					delim = string(rune(d))
				case *String:
					delim = d.S
				default:
					return nil, WrongType("string-split", "a character or string delimiter", args[1])
				}
				if delim == "" {
					return nil, Errorf("string-split: empty delimiter")
				}
				limit := -1
				if len(args) == 3 {
					l, ok := args[2].(int)
					if !ok || l < 1 {
						return nil, WrongType("string-split", "a positive exact integer limit", args[2])
					}
					limit = l
				}
				parts = strings.SplitN(s.S, delim, limit)
			}
			out := make([]Value, len(parts))
			for i, p := range parts {
				out[i] = NewString(p)
			}
			return List(out...), nil
		}),
		prim("string-prefix?", 2, 2, "(string-prefix? prefix s)", func(in *Interp, args []Value) (Value, error) {
			p, err := argString("string-prefix?", args[0])
			if err != nil {
				return nil, err
			}
			s, err := argString("string-prefix?", args[1])
			if err != nil {
				return nil, err
			}
			return strings.HasPrefix(s.S, p.S), nil
		}),
		prim("string-suffix?", 2, 2, "(string-suffix? suffix s)", func(in *Interp, args []Value) (Value, error) {
			p, err := argString("string-suffix?", args[0])
			if err != nil {
				return nil, err
			}
			s, err := argString("string-suffix?", args[1])
			if err != nil {
				return nil, err
			}
			return strings.HasSuffix(s.S, p.S), nil
		}),
		trimPrim("string-trim", true, true),
		trimPrim("string-trim-left", true, false),
		trimPrim("string-trim-right", false, true),
		trimPrim("string-trim-both", true, true),
		padPrim("string-pad", false),
		padPrim("string-pad-left", false),
		padPrim("string-pad-right", true),
		prim("string-reverse", 1, 1, "(string-reverse s)", func(in *Interp, args []Value) (Value, error) {
			s, err := argString("string-reverse", args[0])
			if err != nil {
				return nil, err
			}
			rs := []rune(s.S)
			for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
				rs[i], rs[j] = rs[j], rs[i]
			}
			return NewString(string(rs)), nil
		}),
		prim("string-replace-all", 3, 3, "(string-replace-all s old new) replaces every occurrence of old", func(in *Interp, args []Value) (Value, error) {
			var ss [3]string
			for i := range ss {
				s, err := argString("string-replace-all", args[i])
				if err != nil {
					return nil, err
				}
				ss[i] = s.S
			}
			if ss[1] == "" {
				return nil, Errorf("string-replace-all: empty pattern")
			}
			return NewString(strings.ReplaceAll(ss[0], ss[1], ss[2])), nil
		}),
		prim("string-count", 2, 2, "(string-count s char/pred) counts matching characters", func(in *Interp, args []Value) (Value, error) {
			s, err := argString("string-count", args[0])
			if err != nil {
				return nil, err
			}
			match, cerr, err := charMatcher(in, "string-count", args, 1)
			if err != nil {
				return nil, err
			}
			n := 0
			for _, r := range s.S {
				if match(r) {
					n++
				}
				if *cerr != nil {
					return nil, *cerr
				}
			}
			return n, nil
		}),
	}
}

func toValidUTF8(s string) string {
	return strings.ToValidUTF8(s, "\uFFFD")
}
