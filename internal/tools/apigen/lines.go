package main

import (
	"go/constant"
	"go/token"
	"go/types"
	"sort"
	"strconv"
	"strings"
)

// apiLines returns the API of pkg, sorted, one line per exported name:
//
//	pkg P, const NAME = VALUE          (untyped constant)
//	pkg P, const NAME TYPE = VALUE     (typed constant)
//	pkg P, var NAME TYPE
//	pkg P, func NAME[TPARAMS](PARAMS) RESULTS
//	pkg P, type NAME[TPARAMS] UNDERLYING   (struct and interface as the bare keyword)
//	pkg P, type NAME = TYPE                (alias)
//	pkg P, type NAME struct, FIELD TYPE
//	pkg P, type NAME struct, embedded TYPE
//	pkg P, type NAME interface { M1, M2 }  then one line per method:
//	pkg P, type NAME interface, M(PARAMS) RESULTS
//	pkg P, type NAME interface, embedded TYPE
//	pkg P, type NAME interface, unexported methods
//	pkg P, method (RECV) NAME(PARAMS) RESULTS
//
// Parameter names are left out (renaming one changes no caller), types
// from other packages are qualified by package name, and byte and rune are
// written uint8 and int32 (they are the same types, so spelling one or the
// other is no change either). Methods are those declared on the type, plus
// those promoted from an unexported embedded type, which nothing else
// lists; fields likewise.
func apiLines(pkg *types.Package) []string {
	w := &writer{pkg: pkg, prefix: "pkg " + pkg.Path() + ", "}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Const:
			w.constant(obj)
		case *types.Var:
			w.emit("var " + name + " " + w.typ(obj.Type()))
		case *types.Func:
			w.emit("func " + name + w.signature(obj.Type().(*types.Signature), true))
		case *types.TypeName:
			w.typeName(obj)
		}
	}
	sort.Strings(w.lines)
	return w.lines
}

type writer struct {
	pkg    *types.Package
	prefix string
	lines  []string
}

func (w *writer) emit(s string) { w.lines = append(w.lines, w.prefix+s) }

// qualifier writes types of this package bare and others by package name.
func (w *writer) qualifier(p *types.Package) string {
	if p == w.pkg {
		return ""
	}
	return p.Name()
}

// typ writes t as Go source would, but with parameter names left out of
// function types, types of other packages qualified by package name, and
// byte and rune as uint8 and int32.
func (w *writer) typ(t types.Type) string {
	switch t := t.(type) {
	case *types.Basic:
		switch t.Kind() {
		case types.Byte:
			return "uint8"
		case types.Rune:
			return "int32"
		case types.UnsafePointer:
			return "unsafe.Pointer"
		}
		return t.Name()
	case *types.Pointer:
		return "*" + w.typ(t.Elem())
	case *types.Slice:
		return "[]" + w.typ(t.Elem())
	case *types.Array:
		return "[" + strconv.FormatInt(t.Len(), 10) + "]" + w.typ(t.Elem())
	case *types.Map:
		return "map[" + w.typ(t.Key()) + "]" + w.typ(t.Elem())
	case *types.Chan:
		elem := w.typ(t.Elem())
		switch t.Dir() {
		case types.SendOnly:
			return "chan<- " + elem
		case types.RecvOnly:
			return "<-chan " + elem
		}
		if c, ok := t.Elem().(*types.Chan); ok && c.Dir() == types.RecvOnly {
			elem = "(" + elem + ")"
		}
		return "chan " + elem
	case *types.Signature:
		return "func" + w.signature(t, false)
	case *types.Named:
		return w.objName(t.Obj()) + w.typeArgs(t.TypeArgs())
	case *types.Alias:
		return w.objName(t.Obj()) + w.typeArgs(t.TypeArgs())
	case *types.TypeParam:
		return t.Obj().Name()
	case *types.Struct:
		parts := make([]string, t.NumFields())
		for i := range t.NumFields() {
			f := t.Field(i)
			if f.Embedded() {
				parts[i] = w.typ(f.Type())
			} else {
				parts[i] = f.Name() + " " + w.typ(f.Type())
			}
		}
		return "struct{" + strings.Join(parts, "; ") + "}"
	case *types.Interface:
		var parts []string
		for i := range t.NumExplicitMethods() {
			m := t.ExplicitMethod(i)
			parts = append(parts, m.Name()+w.signature(m.Type().(*types.Signature), false))
		}
		for i := range t.NumEmbeddeds() {
			parts = append(parts, w.typ(t.EmbeddedType(i)))
		}
		return "interface{" + strings.Join(parts, "; ") + "}"
	case *types.Union:
		parts := make([]string, t.Len())
		for i := range t.Len() {
			term := t.Term(i)
			parts[i] = w.typ(term.Type())
			if term.Tilde() {
				parts[i] = "~" + parts[i]
			}
		}
		return strings.Join(parts, " | ")
	}
	return types.TypeString(t, w.qualifier)
}

// objName writes a type's name, qualified unless it is this package's or
// predeclared.
func (w *writer) objName(obj *types.TypeName) string {
	if obj.Pkg() == nil || obj.Pkg() == w.pkg {
		return obj.Name()
	}
	return obj.Pkg().Name() + "." + obj.Name()
}

// typeArgs writes [A, B], or nothing for no arguments.
func (w *writer) typeArgs(list *types.TypeList) string {
	if list.Len() == 0 {
		return ""
	}
	parts := make([]string, list.Len())
	for i := range list.Len() {
		parts[i] = w.typ(list.At(i))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (w *writer) constant(c *types.Const) {
	// Exact, but readable: a float as its decimal, with the exact
	// fraction beside it when the decimal is rounded.
	val := c.Val().ExactString()
	switch c.Val().Kind() {
	case constant.String:
		val = c.Val().String()
	case constant.Float:
		short := c.Val().String()
		val = short
		if v := constant.MakeFromLiteral(short, token.FLOAT, 0); !constant.Compare(v, token.EQL, c.Val()) {
			val += " // " + c.Val().ExactString()
		}
	}
	if b, ok := c.Type().(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
		w.emit("const " + c.Name() + " = " + val)
		return
	}
	w.emit("const " + c.Name() + " " + w.typ(c.Type()) + " = " + val)
}

// signature writes sig's type parameters (if withTParams), parameters and
// results, without names.
func (w *writer) signature(sig *types.Signature, withTParams bool) string {
	var b strings.Builder
	if tp := sig.TypeParams(); withTParams && tp.Len() > 0 {
		b.WriteString(w.typeParams(tp))
	}
	b.WriteString("(")
	params := sig.Params()
	for i := range params.Len() {
		if i > 0 {
			b.WriteString(", ")
		}
		t := params.At(i).Type()
		if sig.Variadic() && i == params.Len()-1 {
			b.WriteString("..." + w.typ(t.(*types.Slice).Elem()))
			continue
		}
		b.WriteString(w.typ(t))
	}
	b.WriteString(")")
	switch res := sig.Results(); res.Len() {
	case 0:
	case 1:
		b.WriteString(" " + w.typ(res.At(0).Type()))
	default:
		b.WriteString(" (")
		for i := range res.Len() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(w.typ(res.At(i).Type()))
		}
		b.WriteString(")")
	}
	return b.String()
}

// typeParams writes [A C1, B C2].
func (w *writer) typeParams(tp *types.TypeParamList) string {
	parts := make([]string, tp.Len())
	for i := range tp.Len() {
		p := tp.At(i)
		parts[i] = p.Obj().Name() + " " + w.typ(p.Constraint())
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (w *writer) typeName(tn *types.TypeName) {
	name := tn.Name()
	if tn.IsAlias() {
		w.emit("type " + name + " = " + w.typ(types.Unalias(tn.Type())))
		return
	}
	named, ok := tn.Type().(*types.Named)
	if !ok {
		return
	}
	head := "type " + name
	if tp := named.TypeParams(); tp.Len() > 0 {
		head += w.typeParams(tp)
	}
	switch u := named.Underlying().(type) {
	case *types.Struct:
		w.emit(head + " struct")
		w.fields(head+" struct, ", u)
	case *types.Interface:
		w.iface(head, u)
	default:
		w.emit(head + " " + w.typ(u))
	}
	w.methods(named)
}

// fields lists the exported fields of s, and the exported fields promoted
// from its unexported embedded structs.
func (w *writer) fields(head string, s *types.Struct) {
	for i := range s.NumFields() {
		f := s.Field(i)
		if f.Embedded() {
			if f.Exported() {
				w.emit(head + "embedded " + w.typ(f.Type()))
			} else if es, ok := deref(f.Type()).Underlying().(*types.Struct); ok {
				w.fields(head, es)
			}
			continue
		}
		if f.Exported() {
			w.emit(head + f.Name() + " " + w.typ(f.Type()))
		}
	}
}

func deref(t types.Type) types.Type {
	if p, ok := t.(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

// iface lists an interface: its exported methods in one line, then each
// method and each embedded type (or type-set term) on its own line.
func (w *writer) iface(head string, it *types.Interface) {
	var names []string
	for i := range it.NumExplicitMethods() {
		if m := it.ExplicitMethod(i); m.Exported() {
			names = append(names, m.Name())
		}
	}
	sort.Strings(names)
	if len(names) > 0 {
		w.emit(head + " interface { " + strings.Join(names, ", ") + " }")
	} else {
		w.emit(head + " interface")
	}
	for i := range it.NumExplicitMethods() {
		if m := it.ExplicitMethod(i); m.Exported() {
			w.emit(head + " interface, " + m.Name() + w.signature(m.Type().(*types.Signature), false))
		}
	}
	for i := range it.NumEmbeddeds() {
		w.emit(head + " interface, embedded " + w.typ(it.EmbeddedType(i)))
	}
	// Unexported methods keep other packages from implementing it.
	for i := range it.NumExplicitMethods() {
		if !it.ExplicitMethod(i).Exported() {
			w.emit(head + " interface, unexported methods")
			break
		}
	}
}

// methods lists the exported methods declared on named, and those
// promoted to it (or its pointer) from unexported embedded fields.
func (w *writer) methods(named *types.Named) {
	recvName := named.Obj().Name()
	if tp := named.TypeParams(); tp.Len() > 0 {
		ps := make([]string, tp.Len())
		for i := range tp.Len() {
			ps[i] = tp.At(i).Obj().Name()
		}
		recvName += "[" + strings.Join(ps, ", ") + "]"
	}
	for i := range named.NumMethods() {
		m := named.Method(i)
		if !m.Exported() {
			continue
		}
		sig := m.Type().(*types.Signature)
		recv := recvName
		if _, ptr := sig.Recv().Type().(*types.Pointer); ptr {
			recv = "*" + recvName
		}
		w.emit("method (" + recv + ") " + m.Name() + w.signature(sig, false))
	}
	if _, ok := named.Underlying().(*types.Struct); !ok {
		return
	}
	for _, ptr := range []bool{false, true} {
		var t types.Type = named
		recv := recvName
		if ptr {
			t, recv = types.NewPointer(named), "*"+recvName
		}
		ms := types.NewMethodSet(t)
		for i := range ms.Len() {
			sel := ms.At(i)
			m := sel.Obj().(*types.Func)
			if len(sel.Index()) < 2 || !m.Exported() || !viaUnexported(named, sel.Index()) {
				continue // declared here, or promoted from an exported embedded type
			}
			if ptr && types.NewMethodSet(named).Lookup(m.Pkg(), m.Name()) != nil {
				continue // already listed for the value receiver
			}
			w.emit("method (" + recv + ") " + m.Name() + w.signature(m.Type().(*types.Signature), false))
		}
	}
}

// viaUnexported reports whether the embedding path index (field indices
// from named down to the method) starts with an unexported field, so that
// the method is reachable only through named.
func viaUnexported(named *types.Named, index []int) bool {
	s := named.Underlying().(*types.Struct)
	return !s.Field(index[0]).Exported()
}
