package scheme

import (
	"math"
	"math/big"
	"strings"
)

// HashTable is a Scheme hash table. It iterates in insertion order (a key
// that is set again keeps its place; a deleted and re-added key moves to the
// end), so output generated from a table is stable.
//
// By default keys are compared with equal?: strings, numbers, symbols,
// characters and booleans hash by value, and pairs, vectors and bytevectors
// made only of such atoms hash by their contents; other values (procedures,
// records, hash tables, very large or circular structures) are compared by
// identity. A table made with eq? or eqv? compares strings, pairs and vectors
// by identity.
type HashTable struct {
	index   map[any]int    // normalised key -> position in entries
	strs    map[string]int // string keys (equal? tables), kept apart to avoid boxing
	entries []htEntry
	dead    int
	walking int
	eqv     bool
}

type htEntry struct {
	key, value Value
	live       bool
}

// NewHashTable returns an empty table comparing keys with equal?.
func NewHashTable() *HashTable { return &HashTable{index: map[any]int{}} }

type (
	strKey    string
	bigKey    string
	structKey string
	nanKey    struct{}
)

// normKey maps a key to a Go-comparable value such that two keys are equal
// under the table's equivalence exactly when their normalised forms are ==.
func (h *HashTable) normKey(k Value) any {
	switch x := k.(type) {
	case int, Symbol, Char, bool, EmptyList:
		return k // already boxed: no allocation
	case float64:
		if math.IsNaN(x) {
			return nanKey{}
		}
		return k
	case *String:
		if h.eqv {
			return k
		}
		return strKey(x.S)
	case *big.Int:
		return bigKey(x.String())
	case *Pair, *Vector, *Bytevector:
		if h.eqv {
			return x
		}
		var b strings.Builder
		budget := 4096
		if structuralKey(&b, x, &budget) {
			return structKey(b.String())
		}
		return x
	}
	return k
}

// structuralKey writes an unambiguous encoding of an atom-only structure;
// it returns false when the structure holds something without a value
// encoding or is too large.
func structuralKey(b *strings.Builder, v Value, budget *int) bool {
	*budget--
	if *budget < 0 {
		return false
	}
	switch x := v.(type) {
	case *Pair:
		b.WriteByte('(')
		for {
			if !structuralKey(b, x.Car, budget) {
				return false
			}
			next, ok := x.Cdr.(*Pair)
			if !ok {
				break
			}
			*budget--
			if *budget < 0 {
				return false
			}
			b.WriteByte(' ')
			x = next
		}
		if _, ok := x.Cdr.(EmptyList); !ok {
			b.WriteString(" . ")
			if !structuralKey(b, x.Cdr, budget) {
				return false
			}
		}
		b.WriteByte(')')
	case *Vector:
		b.WriteString("#(")
		for i, e := range x.Items {
			if i > 0 {
				b.WriteByte(' ')
			}
			if !structuralKey(b, e, budget) {
				return false
			}
		}
		b.WriteByte(')')
	case *Bytevector:
		printValue(b, x, true)
	case int, *big.Int, float64, bool, Char, *String, Symbol, EmptyList:
		printValue(b, x, true)
	default:
		return false
	}
	return true
}

// lookup returns the position of key in entries.
func (h *HashTable) lookup(key Value) (int, bool) {
	if s, ok := key.(*String); ok && !h.eqv {
		i, ok := h.strs[s.S]
		return i, ok
	}
	i, ok := h.index[h.normKey(key)]
	return i, ok
}

// setIndex records that key lives at position i.
func (h *HashTable) setIndex(key Value, i int) {
	if s, ok := key.(*String); ok && !h.eqv {
		if h.strs == nil {
			h.strs = map[string]int{}
		}
		h.strs[s.S] = i
		return
	}
	h.index[h.normKey(key)] = i
}

// Get returns the value stored under key.
func (h *HashTable) Get(key Value) (Value, bool) {
	i, ok := h.lookup(key)
	if !ok {
		return nil, false
	}
	return h.entries[i].value, true
}

// Set stores value under key.
func (h *HashTable) Set(key, value Value) {
	if i, ok := h.lookup(key); ok {
		h.entries[i].value = value
		return
	}
	if s, ok := key.(*String); ok && !h.eqv {
		key = NewString(s.S) // later mutation of the caller's string does not move the key
	}
	h.setIndex(key, len(h.entries))
	h.entries = append(h.entries, htEntry{key: key, value: value, live: true})
}

// Delete removes key; it reports whether the key was present.
func (h *HashTable) Delete(key Value) bool {
	i, ok := h.lookup(key)
	if !ok {
		return false
	}
	if s, ok := key.(*String); ok && !h.eqv {
		delete(h.strs, s.S)
	} else {
		delete(h.index, h.normKey(key))
	}
	h.entries[i] = htEntry{}
	h.dead++
	h.maybeCompact()
	return true
}

func (h *HashTable) maybeCompact() {
	if h.walking > 0 || h.dead < 32 || h.dead*2 < len(h.entries) {
		return
	}
	live := make([]htEntry, 0, len(h.entries)-h.dead)
	for _, e := range h.entries {
		if e.live {
			h.setIndex(e.key, len(live))
			live = append(live, e)
		}
	}
	h.entries = live
	h.dead = 0
}

// Count returns the number of entries.
func (h *HashTable) Count() int { return len(h.index) + len(h.strs) }

// Clear removes every entry.
func (h *HashTable) Clear() {
	h.index = map[any]int{}
	h.strs = nil
	if h.walking > 0 {
		for i := range h.entries {
			h.entries[i] = htEntry{}
		}
		h.dead = len(h.entries)
		return
	}
	h.entries = nil
	h.dead = 0
}

// Range calls f for each entry in insertion order until f returns false.
// Entries added during the walk are not visited; entries deleted during the
// walk are skipped.
func (h *HashTable) Range(f func(key, value Value) bool) {
	h.walking++
	defer func() {
		h.walking--
		h.maybeCompact()
	}()
	n := len(h.entries)
	for i := 0; i < n && i < len(h.entries); i++ {
		e := h.entries[i]
		if e.live && !f(e.key, e.value) {
			return
		}
	}
}

// rangeErr is Range for callbacks that can fail.
func (h *HashTable) rangeErr(f func(key, value Value) error) error {
	var err error
	h.Range(func(k, v Value) bool {
		err = f(k, v)
		return err == nil
	})
	return err
}

// Copy returns an independent table with the same entries.
func (h *HashTable) Copy() *HashTable {
	c := &HashTable{index: make(map[any]int, h.Count()), eqv: h.eqv}
	c.entries = make([]htEntry, 0, h.Count())
	for _, e := range h.entries {
		if e.live {
			c.setIndex(e.key, len(c.entries))
			c.entries = append(c.entries, e)
		}
	}
	return c
}

// Keys returns the keys in insertion order.
func (h *HashTable) Keys() []Value {
	out := make([]Value, 0, h.Count())
	h.Range(func(k, _ Value) bool { out = append(out, k); return true })
	return out
}

func argHashTable(proc string, v Value) (*HashTable, error) {
	h, ok := v.(*HashTable)
	if !ok {
		return nil, WrongType(proc, "a hash table", v)
	}
	return h, nil
}

// tableForEquiv makes a table for an equivalence procedure argument.
func tableForEquiv(proc string, args []Value) (*HashTable, error) {
	h := NewHashTable()
	if len(args) == 0 {
		return h, nil
	}
	p, ok := args[0].(*Primitive)
	if !ok {
		return nil, WrongType(proc, "one of the equivalence procedures eq?, eqv?, equal?, string=?, symbol=? or =", args[0])
	}
	switch p.Name {
	case "eq?", "eqv?", "=", "symbol=?", "char=?":
		h.eqv = true
	case "equal?", "string=?":
	default:
		return nil, WrongType(proc, "one of the equivalence procedures eq?, eqv?, equal?, string=?, symbol=? or =", args[0])
	}
	return h, nil
}

func hashTablePrimitives() []*Primitive {
	ref := prim("hash-table-ref", 2, 4, "(hash-table-ref table key [failure-thunk [success-proc]]) is an error when key is missing and no thunk is given", func(in *Interp, args []Value) (Value, error) {
		h, err := argHashTable("hash-table-ref", args[0])
		if err != nil {
			return nil, err
		}
		v, ok := h.Get(args[1])
		if !ok {
			if len(args) >= 3 {
				if err := argProc("hash-table-ref", args[2]); err != nil {
					return nil, err
				}
				return in.Apply(args[2], nil)
			}
			return nil, Errorf("hash-table-ref: no such key: %s", errString(args[1]))
		}
		if len(args) == 4 {
			if err := argProc("hash-table-ref", args[3]); err != nil {
				return nil, err
			}
			return in.Apply(args[3], []Value{v})
		}
		return v, nil
	})
	contains := prim("hash-table-contains?", 2, 2, "(hash-table-contains? table key)", func(in *Interp, args []Value) (Value, error) {
		h, err := argHashTable("hash-table-contains?", args[0])
		if err != nil {
			return nil, err
		}
		_, ok := h.Get(args[1])
		return ok, nil
	})
	size := prim("hash-table-size", 1, 1, "(hash-table-size table) is the number of entries", func(in *Interp, args []Value) (Value, error) {
		h, err := argHashTable("hash-table-size", args[0])
		if err != nil {
			return nil, err
		}
		return h.Count(), nil
	})
	return []*Primitive{
		prim("make-hash-table", 0, 2, "(make-hash-table [equiv [hash]]) makes an insertion-ordered table; equiv defaults to equal?", func(in *Interp, args []Value) (Value, error) {
			return tableForEquiv("make-hash-table", args)
		}),
		predPrim("hash-table?", func(v Value) bool { _, ok := v.(*HashTable); return ok }),
		ref,
		prim("hash-table-ref/default", 3, 3, "(hash-table-ref/default table key default)", func(in *Interp, args []Value) (Value, error) {
			h, err := argHashTable("hash-table-ref/default", args[0])
			if err != nil {
				return nil, err
			}
			if v, ok := h.Get(args[1]); ok {
				return v, nil
			}
			return args[2], nil
		}),
		prim("hash-table-set!", 3, 3, "(hash-table-set! table key value)", func(in *Interp, args []Value) (Value, error) {
			h, err := argHashTable("hash-table-set!", args[0])
			if err != nil {
				return nil, err
			}
			h.Set(args[1], args[2])
			return Void, nil
		}),
		prim("hash-table-delete!", 2, 2, "(hash-table-delete! table key)", func(in *Interp, args []Value) (Value, error) {
			h, err := argHashTable("hash-table-delete!", args[0])
			if err != nil {
				return nil, err
			}
			h.Delete(args[1])
			return Void, nil
		}),
		contains,
		alias("hash-table-exists?", contains),
		prim("hash-table-update!", 3, 4, "(hash-table-update! table key proc [failure-thunk]) stores (proc old-value)", func(in *Interp, args []Value) (Value, error) {
			h, err := argHashTable("hash-table-update!", args[0])
			if err != nil {
				return nil, err
			}
			if err := argProc("hash-table-update!", args[2]); err != nil {
				return nil, err
			}
			old, ok := h.Get(args[1])
			if !ok {
				if len(args) < 4 {
					return nil, Errorf("hash-table-update!: no such key: %s", errString(args[1]))
				}
				if err := argProc("hash-table-update!", args[3]); err != nil {
					return nil, err
				}
				if old, err = in.Apply(args[3], nil); err != nil {
					return nil, err
				}
			}
			nv, err := in.Apply(args[2], []Value{old})
			if err != nil {
				return nil, err
			}
			h.Set(args[1], nv)
			return Void, nil
		}),
		prim("hash-table-update!/default", 4, 4, "(hash-table-update!/default table key proc default) stores (proc (or old-value default))", func(in *Interp, args []Value) (Value, error) {
			h, err := argHashTable("hash-table-update!/default", args[0])
			if err != nil {
				return nil, err
			}
			if err := argProc("hash-table-update!/default", args[2]); err != nil {
				return nil, err
			}
			old, ok := h.Get(args[1])
			if !ok {
				old = args[3]
			}
			nv, err := in.Apply(args[2], []Value{old})
			if err != nil {
				return nil, err
			}
			h.Set(args[1], nv)
			return Void, nil
		}),
		prim("hash-table-keys", 1, 1, "(hash-table-keys table) in insertion order", func(in *Interp, args []Value) (Value, error) {
			h, err := argHashTable("hash-table-keys", args[0])
			if err != nil {
				return nil, err
			}
			return List(h.Keys()...), nil
		}),
		prim("hash-table-values", 1, 1, "(hash-table-values table) in insertion order", func(in *Interp, args []Value) (Value, error) {
			h, err := argHashTable("hash-table-values", args[0])
			if err != nil {
				return nil, err
			}
			out := make([]Value, 0, h.Count())
			h.Range(func(_, v Value) bool { out = append(out, v); return true })
			return List(out...), nil
		}),
		prim("hash-table->alist", 1, 1, "(hash-table->alist table) in insertion order", func(in *Interp, args []Value) (Value, error) {
			h, err := argHashTable("hash-table->alist", args[0])
			if err != nil {
				return nil, err
			}
			out := make([]Value, 0, h.Count())
			h.Range(func(k, v Value) bool { out = append(out, &Pair{Car: k, Cdr: v}); return true })
			return List(out...), nil
		}),
		prim("hash-table-count", 1, 2, "(hash-table-count table) is the number of entries; (hash-table-count pred table) counts entries for which (pred key value) is true", func(in *Interp, args []Value) (Value, error) {
			if len(args) == 1 {
				h, err := argHashTable("hash-table-count", args[0])
				if err != nil {
					return nil, err
				}
				return h.Count(), nil
			}
			if err := argProc("hash-table-count", args[0]); err != nil {
				return nil, err
			}
			h, err := argHashTable("hash-table-count", args[1])
			if err != nil {
				return nil, err
			}
			n := 0
			err = h.rangeErr(func(k, v Value) error {
				r, err := in.Apply(args[0], []Value{k, v})
				if err == nil && IsTrue(r) {
					n++
				}
				return err
			})
			if err != nil {
				return nil, err
			}
			return n, nil
		}),
		size,
		prim("hash-table-walk", 2, 2, "(hash-table-walk table proc) calls (proc key value) for each entry in insertion order", func(in *Interp, args []Value) (Value, error) {
			h, err := argHashTable("hash-table-walk", args[0])
			if err != nil {
				return nil, err
			}
			if err := argProc("hash-table-walk", args[1]); err != nil {
				return nil, err
			}
			err = h.rangeErr(func(k, v Value) error {
				_, err := in.Apply(args[1], []Value{k, v})
				return err
			})
			if err != nil {
				return nil, err
			}
			return Void, nil
		}),
		prim("hash-table-fold", 3, 3, "(hash-table-fold table kons knil) calls (kons key value acc) in insertion order", func(in *Interp, args []Value) (Value, error) {
			h, err := argHashTable("hash-table-fold", args[0])
			if err != nil {
				return nil, err
			}
			if err := argProc("hash-table-fold", args[1]); err != nil {
				return nil, err
			}
			acc := args[2]
			err = h.rangeErr(func(k, v Value) error {
				var err error
				acc, err = in.Apply(args[1], []Value{k, v, acc})
				return err
			})
			if err != nil {
				return nil, err
			}
			return acc, nil
		}),
		prim("hash-table-copy", 1, 2, "(hash-table-copy table [mutable?])", func(in *Interp, args []Value) (Value, error) {
			h, err := argHashTable("hash-table-copy", args[0])
			if err != nil {
				return nil, err
			}
			return h.Copy(), nil
		}),
		prim("hash-table-clear!", 1, 1, "(hash-table-clear! table)", func(in *Interp, args []Value) (Value, error) {
			h, err := argHashTable("hash-table-clear!", args[0])
			if err != nil {
				return nil, err
			}
			h.Clear()
			return Void, nil
		}),
		prim("alist->hash-table", 1, 3, "(alist->hash-table alist [equiv [hash]]); the first occurrence of a key wins", func(in *Interp, args []Value) (Value, error) {
			vals, err := argList("alist->hash-table", args[0])
			if err != nil {
				return nil, err
			}
			h, err := tableForEquiv("alist->hash-table", args[1:])
			if err != nil {
				return nil, err
			}
			for _, v := range vals {
				p, ok := v.(*Pair)
				if !ok {
					return nil, WrongType("alist->hash-table", "an association list (element is not a pair)", v)
				}
				if _, ok := h.Get(p.Car); !ok {
					h.Set(p.Car, p.Cdr)
				}
			}
			return h, nil
		}),
	}
}
