package fakegithub

import (
	"fmt"
	"strconv"
	"strings"
)

// evalExpr evaluates the part of GitHub's expression language a run-name uses: string
// literals, context references (looked up with ctx; unknown ones are empty), ==, !=,
// &&, ||, ! and parentheses, and format(). Values are strings; "" and "false" are
// falsy, as in GitHub's coercion of these results.
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
		if name != "format" || len(args) == 0 {
			return "", fmt.Errorf("function %s is not supported", name)
		}
		out := args[0]
		for k, a := range args[1:] {
			out = strings.ReplaceAll(out, "{"+strconv.Itoa(k)+"}", a)
		}
		return out, nil
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
