package structured

import (
	"errors"
	"strings"
	"testing"
)

// What the lenient reader makes of the faults pages have: the JSON it
// recovers and the fault it reports.
func TestLenient(t *testing.T) {
	for _, c := range []struct{ in, raw, problem string }{
		{`{"a":1}`, `{"a":1}`, ""},
		{" \n<!-- {\"a\" : 1} -->\n", `{"a" : 1}`, ""},
		{"//<![CDATA[\n[1, 2]\n//]]>", `[1, 2]`, ""},
		{`{"a":[1,2,],}`, `{"a":[1,2]}`, "trailing comma at byte 9"},
		{`{"a":1,,"b":2}`, `{"a":1,"b":2}`, "extra comma"},
		{`{"a":1 "b":2}`, `{"a":1,"b":2}`, "missing comma"},
		{`{'a':'it\'s'}`, `{"a":"it's"}`, "single-quoted string"},
		{`{a:1, @type:"T", schema:name:"n"}`, `{"a":1,"@type":"T","schema:name":"n"}`, "unquoted key"},
		{`{a:true}`, `{"a":true}`, "unquoted key"},
		{"{\"a\": /* note */ 1, // end\n}", `{"a":1}`, "comment at byte 6"},
		{"{\"a\":\"x\ty\"}", `{"a":"x\ty"}`, "control character"},
		{`{"a":"\x\u00e9\ud83d\ude00\ud800"}`, `{"a":"xé😀�"}`, "unknown escape"},
		{`[01, +1, .5, 1., -]`, `["01","+1",".5","1.","-"]`, "invalid number"},
		{`{"a":{"b":[1,{"c":"d`, `{"a":{"b":[1,{"c":"d"}]}}`, "the block ends early"},
		{`{"a":1, "b": undefined, "c": 3}`, `{"a":1}`, "unexpected 'u'"},
		{`{"a":1};{"b":2} {"c":3}`, `[{"a":1},{"b":2},{"c":3}]`, "3 JSON values"},
		{"{\"a\":\u00a01}", `{"a":1}`, "no-break space"},
		{`{"a":1} trailing`, `{"a":1}`, "unexpected 't'"},
		{`NaN`, ``, "no JSON value"},
	} {
		d := FromNode(scriptDoc([]byte(c.in)), "")
		b := d.JSONLD[0]
		if string(b.Raw) != c.raw {
			t.Errorf("%q: raw %s, want %s", c.in, b.Raw, c.raw)
		}
		switch {
		case c.problem == "" && b.Err != nil:
			t.Errorf("%q: error %v, want none", c.in, b.Err)
		case c.problem != "" && (!errors.Is(b.Err, ErrMalformed) || !strings.Contains(b.Err.Error(), c.problem)):
			t.Errorf("%q: error %v, want ErrMalformed saying %q", c.in, b.Err, c.problem)
		}
	}
}
