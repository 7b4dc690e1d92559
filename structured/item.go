package structured

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// Item is one JSON-LD node object or microdata item: a thing of some types
// with named property values. It is the model both formats share, shaped
// like HTML's JSON form of microdata (HTML §5.3 "Converting HTML to other
// formats").
type Item struct {
	// Types are the @type values or itemtype tokens, as written.
	Types []string `json:"type,omitempty"`
	// ID is the @id or itemid, resolved against the page's base URL.
	ID string `json:"id,omitempty"`
	// Properties maps each property name, as written ("name",
	// "schema:name" or a full URL), to its values in order.
	Properties map[string][]Value `json:"properties,omitempty"`
}

// Kind says what a Value holds.
type Kind uint8

// Value kinds.
const (
	KindString Kind = iota // text
	KindNumber             // a JSON number, Text as written
	KindBool               // a JSON true or false
	KindURL                // a microdata URL property (href, src, data), resolved
	KindItem               // a nested item, in Item
)

// Value is one value of a property.
type Value struct {
	Kind Kind
	// Text is the value as text: a string, a number as written, "true"
	// or "false", a URL. Empty for an item.
	Text string
	// Item is the nested item of a KindItem.
	Item *Item
}

// MarshalJSON writes a value as JSON: a string, number, boolean or item.
func (v Value) MarshalJSON() ([]byte, error) {
	switch v.Kind {
	case KindItem:
		if v.Item == nil {
			return []byte("null"), nil
		}
		return json.Marshal(v.Item)
	case KindNumber, KindBool:
		if json.Valid([]byte(v.Text)) {
			return []byte(v.Text), nil
		}
	}
	return json.Marshal(v.Text)
}

// localName is the part of a type or property name after its vocabulary:
// "Product" of "https://schema.org/Product", "schema:Product" and "Product".
func localName(s string) string {
	return s[strings.LastIndexAny(s, "/#:")+1:]
}

// Is reports whether the item has type t, comparing local names, so that
// Is("Product") holds for "Product", "schema:Product" and
// "https://schema.org/Product" alike.
func (it *Item) Is(t string) bool {
	t = localName(t)
	for _, x := range it.Types {
		if localName(x) == t {
			return true
		}
	}
	return false
}

// Values returns the values of property name; a name not present as
// written is looked up by local name ("name" finds "schema:name").
func (it *Item) Values(name string) []Value {
	if it == nil {
		return nil
	}
	if vs, ok := it.Properties[name]; ok {
		return vs
	}
	// Of several names with that local name, the least, so that the
	// answer does not depend on map order.
	ln := localName(name)
	var best string
	var found []Value
	for k, vs := range it.Properties {
		if localName(k) == ln && (found == nil || k < best) {
			best, found = k, vs
		}
	}
	return found
}

// String returns the first text value of property name ("" if none).
func (it *Item) String(name string) string {
	for _, v := range it.Values(name) {
		if v.Kind != KindItem {
			return v.Text
		}
	}
	return ""
}

// Strings returns the text values of property name.
func (it *Item) Strings(name string) []string {
	var out []string
	for _, v := range it.Values(name) {
		if v.Kind != KindItem {
			out = append(out, v.Text)
		}
	}
	return out
}

// Item returns the first nested item of property name (nil if none).
func (it *Item) Item(name string) *Item {
	for _, v := range it.Values(name) {
		if v.Kind == KindItem {
			return v.Item
		}
	}
	return nil
}

// Items returns the nested items of property name.
func (it *Item) Items(name string) []*Item {
	var out []*Item
	for _, v := range it.Values(name) {
		if v.Kind == KindItem {
			out = append(out, v.Item)
		}
	}
	return out
}

// sortedKeys returns m's keys in order, so that walks are deterministic.
func sortedKeys(m map[string][]Value) []string {
	return slices.Sorted(maps.Keys(m))
}

// maxWalkDepth bounds walk: the parse bounds nesting already (MaxDepth);
// this guards against cycles in items built by hand.
const maxWalkDepth = 1 << 10

// walk calls fn for it and each nested item, depth first.
func (it *Item) walk(depth int, fn func(*Item)) {
	if it == nil || depth > maxWalkDepth {
		return
	}
	fn(it)
	for _, k := range sortedKeys(it.Properties) {
		for _, v := range it.Properties[k] {
			if v.Kind == KindItem {
				v.Item.walk(depth+1, fn)
			}
		}
	}
}
