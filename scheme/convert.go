package scheme

import (
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
)

// ToGo converts a Scheme value to plain Go data, following the same shape
// as the JSON bridge:
//
//	exact integer   int (*big.Int when it does not fit)
//	real            float64
//	boolean         bool
//	string, symbol, character   string
//	'()             nil
//	association list (non-empty, every element a pair whose car is a symbol
//	or string)      map[string]any
//	other list      []any (an improper list's tail is the last element)
//	vector          []any
//	hash table      map[string]any (keys rendered with display)
//	bytevector      []byte
//	unspecified, eof, the symbol null   nil
//
// Other values (procedures, records, ports) are returned unchanged.
func ToGo(v Value) any { return toGo(v, 0) }

func toGo(v Value, depth int) any {
	if depth > 10000 {
		return nil
	}
	switch x := v.(type) {
	case int, *big.Int, float64, bool:
		return x
	case *String:
		return x.S
	case Symbol:
		if x == "null" {
			return nil
		}
		return string(x)
	case Char:
		return string(rune(x))
	case EmptyList, Unspecified, EOFObject:
		return nil
	case *Pair:
		vals, proper := ListToSlice(x)
		if proper && isJSONAlist(vals) {
			m := make(map[string]any, len(vals))
			for _, e := range vals {
				p := e.(*Pair)
				m[DisplayString(p.Car)] = toGo(p.Cdr, depth+1)
			}
			return m
		}
		out := make([]any, 0, len(vals)+1)
		var tail Value = x
		for {
			p, ok := tail.(*Pair)
			if !ok {
				break
			}
			out = append(out, toGo(p.Car, depth+1))
			tail = p.Cdr
		}
		if _, ok := tail.(EmptyList); !ok {
			out = append(out, toGo(tail, depth+1))
		}
		return out
	case *Vector:
		out := make([]any, len(x.Items))
		for i, e := range x.Items {
			out[i] = toGo(e, depth+1)
		}
		return out
	case *HashTable:
		m := make(map[string]any, x.Count())
		x.Range(func(k, val Value) bool {
			m[DisplayString(k)] = toGo(val, depth+1)
			return true
		})
		return m
	case *Bytevector:
		return append([]byte(nil), x.B...)
	}
	return v
}

// FromGo converts Go data to a Scheme value:
//
//	nil                          '()
//	string                       string
//	bool                         boolean
//	int, int8...int64, uint...   exact integer (bignum when needed)
//	float32, float64             real
//	json.Number                  exact integer when integral, else real
//	*big.Int                     exact integer
//	[]byte                       bytevector
//	[]any, []string, any slice   list
//	map[string]any, map with string keys   association list with symbol keys,
//	                             sorted by key so the result is deterministic
//	error                        error object with the error's message
//
// Scheme values (Symbol, *String, *Pair, ...) pass through unchanged, as do
// other Go values, which Scheme code sees as opaque objects.
func FromGo(x any) Value { return fromGo(x, 0) }

func fromGo(x any, depth int) Value {
	switch v := x.(type) {
	case nil:
		return Nil
	case string:
		return NewString(v)
	case bool:
		return v
	case int:
		return v
	case int8:
		return int(v)
	case int16:
		return int(v)
	case int32:
		return int(v)
	case int64:
		return int(v)
	case uint8:
		return int(v)
	case uint16:
		return int(v)
	case uint32:
		return int(v)
	case uint:
		return fromUint(uint64(v))
	case uint64:
		return fromUint(v)
	case float32:
		return float64(v)
	case float64:
		return v
	case json.Number:
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return int(n)
		}
		if b, ok := new(big.Int).SetString(string(v), 10); ok {
			return bigToValue(b)
		}
		f, err := v.Float64()
		if err != nil && !math.IsInf(f, 0) {
			return NewString(string(v))
		}
		return f
	case *big.Int:
		return bigToValue(new(big.Int).Set(v))
	case []byte:
		return &Bytevector{B: append([]byte(nil), v...)}
	case []any:
		out := make([]Value, len(v))
		for i, e := range v {
			out[i] = fromGo(e, depth+1)
		}
		return List(out...)
	case []string:
		out := make([]Value, len(v))
		for i, e := range v {
			out[i] = NewString(e)
		}
		return List(out...)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([]Value, len(keys))
		for i, k := range keys {
			out[i] = &Pair{Car: Symbol(k), Cdr: fromGo(v[k], depth+1)}
		}
		return List(out...)
	case *ErrorObject:
		return v
	case error:
		return &ErrorObject{Message: v.Error()}
	case Symbol, Char, *String, *Pair, EmptyList, *Vector, *Bytevector, *HashTable,
		*Primitive, Unspecified, EOFObject, *Port, *Parameter, *MultipleValues:
		return v
	}
	if depth > 10000 {
		return Nil
	}
	rv := reflect.ValueOf(x)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		out := make([]Value, rv.Len())
		for i := range out {
			out[i] = fromGo(rv.Index(i).Interface(), depth+1)
		}
		return List(out...)
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		keys := make([]string, 0, rv.Len())
		for _, k := range rv.MapKeys() {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		out := make([]Value, len(keys))
		for i, k := range keys {
			kv := reflect.ValueOf(k).Convert(rv.Type().Key())
			out[i] = &Pair{Car: Symbol(k), Cdr: fromGo(rv.MapIndex(kv).Interface(), depth+1)}
		}
		return List(out...)
	case reflect.String:
		return NewString(rv.String())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(rv.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fromUint(rv.Uint())
	case reflect.Float32, reflect.Float64:
		return rv.Float()
	case reflect.Bool:
		return rv.Bool()
	}
	return x
}

func fromUint(u uint64) Value {
	if u <= math.MaxInt64 {
		return int(u)
	}
	return bigToValue(new(big.Int).SetUint64(u))
}
