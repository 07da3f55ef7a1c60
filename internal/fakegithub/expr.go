package fakegithub

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// EvalExpr evaluates the part of GitHub's expression language that perfbot's workflows
// use in run-name and a job's if: string literals, context references (looked up with
// ctx; unknown ones are empty), ==, !=, &&, ||, ! and parentheses, format(), contains()
// and startsWith() on strings (case-insensitive, as GitHub's), and fromJSON() of a JSON
// scalar (a string literal with \n in it, say). Values are strings; "", "false" and "0"
// are falsy, as in GitHub's coercion of these results.
func EvalExpr(expr string, ctx func(string) string) (string, error) {
	return evalExpr(expr, ctx)
}

// Truthy is how an if: takes EvalExpr's value.
func Truthy(v string) bool { return truthy(v) }

func evalExpr(expr string, ctx func(string) string) (string, error) {
	p := &exprParser{s: expr, ctx: ctx}
	v, err := p.or()
	if err != nil {
		return "", err
	}
	p.space()
	if p.i != len(p.s) {
		return "", fmt.Errorf("unexpected %q at %d", p.s[p.i:], p.i)
	}
	return v, nil
}

type exprParser struct {
	s   string
	i   int
	ctx func(string) string
}

func truthy(v string) bool { return v != "" && v != "false" && v != "0" }

func (p *exprParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *exprParser) eat(tok string) bool {
	p.space()
	if strings.HasPrefix(p.s[p.i:], tok) {
		p.i += len(tok)
		return true
	}
	return false
}

func (p *exprParser) or() (string, error) {
	v, err := p.and()
	for err == nil && p.eat("||") {
		var r string
		r, err = p.and()
		if !truthy(v) {
			v = r
		}
	}
	return v, err
}

func (p *exprParser) and() (string, error) {
	v, err := p.cmp()
	for err == nil && p.eat("&&") {
		var r string
		r, err = p.cmp()
		if truthy(v) {
			v = r
		}
	}
	return v, err
}

func (p *exprParser) cmp() (string, error) {
	v, err := p.unary()
	if err != nil {
		return "", err
	}
	switch {
	case p.eat("=="):
		r, err := p.unary()
		return strconv.FormatBool(strings.EqualFold(v, r)), err
	case p.eat("!="):
		r, err := p.unary()
		return strconv.FormatBool(!strings.EqualFold(v, r)), err
	}
	return v, nil
}

func (p *exprParser) unary() (string, error) {
	if p.eat("!") {
		v, err := p.unary()
		return strconv.FormatBool(!truthy(v)), err
	}
	if p.eat("(") {
		v, err := p.or()
		if err == nil && !p.eat(")") {
			err = fmt.Errorf("missing ) at %d", p.i)
		}
		return v, err
	}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '\'' {
		var b strings.Builder
		for p.i++; p.i < len(p.s); p.i++ {
			if p.s[p.i] == '\'' {
				if p.i+1 < len(p.s) && p.s[p.i+1] == '\'' { // '' is a quote
					b.WriteByte('\'')
					p.i++
					continue
				}
				p.i++
				return b.String(), nil
			}
			b.WriteByte(p.s[p.i])
		}
		return "", fmt.Errorf("unterminated string")
	}
	start := p.i
	for p.i < len(p.s) && (isIdent(p.s[p.i]) || p.s[p.i] == '.') {
		p.i++
	}
	name := p.s[start:p.i]
	if name == "" {
		return "", fmt.Errorf("unexpected %q at %d", p.s[p.i:], p.i)
	}
	if p.eat("(") {
		var args []string
		for !p.eat(")") {
			if len(args) > 0 && !p.eat(",") {
				return "", fmt.Errorf("want , or ) at %d", p.i)
			}
			a, err := p.or()
			if err != nil {
				return "", err
			}
			args = append(args, a)
		}
		return exprCall(name, args)
	}
	switch name {
	case "true", "false":
		return name, nil
	}
	return p.ctx(name), nil
}

func isIdent(c byte) bool {
	return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// exprCall runs one of the supported functions.
func exprCall(name string, args []string) (string, error) {
	switch {
	case name == "format" && len(args) > 0:
		out := args[0]
		for k, a := range args[1:] {
			out = strings.ReplaceAll(out, "{"+strconv.Itoa(k)+"}", a)
		}
		return out, nil
	case name == "contains" && len(args) == 2:
		return strconv.FormatBool(strings.Contains(strings.ToLower(args[0]), strings.ToLower(args[1]))), nil
	case name == "startsWith" && len(args) == 2:
		return strconv.FormatBool(strings.HasPrefix(strings.ToLower(args[0]), strings.ToLower(args[1]))), nil
	case name == "fromJSON" && len(args) == 1:
		var v any
		if err := json.Unmarshal([]byte(args[0]), &v); err != nil {
			return "", fmt.Errorf("fromJSON(%q): %w", args[0], err)
		}
		switch v := v.(type) {
		case string:
			return v, nil
		case bool, float64:
			return fmt.Sprint(v), nil
		case nil:
			return "", nil
		}
		return "", fmt.Errorf("fromJSON(%q): only a JSON string, number, boolean or null is supported", args[0])
	}
	return "", fmt.Errorf("function %s with %d arguments is not supported", name, len(args))
}
