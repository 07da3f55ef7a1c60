package chart

import (
	"bytes"
	"fmt"
	"math"
)

// The colours of the written SVGs (the trend page styles its own with CSS).
const (
	ColorMlxcel = "#0969da"
	ColorMlxLM  = "#bc4c00"
	colorBand   = "#0969da"
	colorOut    = "#cf222e"
	colorText   = "#59636e"
	colorGrid   = "#e6eaef"
	colorAxis   = "#8c959f"
	colorRest   = "#d0d7de"
)

// Palette colours the segments of a bar chart in key order (Okabe-Ito, readable by
// colour-blind readers); the part of a bar no key claims is grey.
var Palette = []string{"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000"}

// LegendKind is how a legend item is drawn.
type LegendKind int

// Legend item kinds.
const (
	LegendLine LegendKind = iota
	LegendDashed
	LegendBand
	LegendOut
	LegendBox
)

// LegendItem is one entry of a legend.
type LegendItem struct {
	Label string
	Color string
	Kind  LegendKind
}

// Panel is one titled line chart of a WriteLines document.
type Panel struct {
	Title  string
	Plot   LinePlot
	Legend []LegendItem
}

const (
	titleH  = 22.0
	legendH = 20.0
)

func header(b *bytes.Buffer, w, h float64, label string) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s" font-family="Helvetica, Arial, sans-serif" font-size="%g">`+"\n",
		f(w), f(h), f(w), f(h), Esc(label), fontSize)
	fmt.Fprintf(b, "<title>%s</title>\n", Esc(label))
	fmt.Fprintf(b, `<rect x="0" y="0" width="%s" height="%s" fill="#ffffff"/>`+"\n", f(w), f(h))
}

// fit clips s so that it is at most w wide at size.
func fit(s string, w, size float64) string {
	n := len([]rune(s))
	for n > 1 && TextWidth(Clip(s, n), size) > w {
		n--
	}
	return Clip(s, n)
}

// legend draws items from (x, y) on, wrapping at width; it returns the rows used.
func legend(b *bytes.Buffer, items []LegendItem, x0, y, width float64) int {
	x, rows := x0, 1
	for _, it := range items {
		label := fit(it.Label, width-x0-padEdge-26, fontSize)
		w := 22 + TextWidth(label, fontSize) + 14
		if x > x0 && x+w > width-padEdge {
			x, y, rows = x0, y+legendH, rows+1
		}
		switch it.Kind {
		case LegendLine, LegendDashed:
			dash := ""
			if it.Kind == LegendDashed {
				dash = ` stroke-dasharray="5 4"`
			}
			fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"%s/>`+"\n", f(x), f(y-4), f(x+16), f(y-4), it.Color, dash)
		case LegendBand:
			fmt.Fprintf(b, `<rect x="%s" y="%s" width="16" height="10" fill="%s" fill-opacity="0.16" stroke="%s" stroke-opacity="0.35"/>`+"\n", f(x), f(y-9), it.Color, it.Color)
		case LegendOut:
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="5.5" fill="none" stroke="%s" stroke-width="2"/>`+"\n", f(x+8), f(y-4), it.Color)
		default:
			fmt.Fprintf(b, `<rect x="%s" y="%s" width="16" height="10" fill="%s"/>`+"\n", f(x), f(y-9), it.Color)
		}
		fmt.Fprintf(b, `<text x="%s" y="%s" fill="%s">%s</text>`+"\n", f(x+22), f(y), colorText, Esc(label))
		x += w
	}
	return rows
}

// legendRows is how many rows legend will use.
func legendRows(items []LegendItem, x0, width float64) int {
	var b bytes.Buffer
	if len(items) == 0 {
		return 0
	}
	return legend(&b, items, x0, 0, width)
}

// WriteLines writes a self-contained SVG document of line charts stacked one under
// the other, each under its title and over its legend; label is the document's
// accessible description.
func WriteLines(label string, panels []Panel) ([]byte, error) {
	if len(panels) == 0 {
		return nil, fmt.Errorf("a chart document needs at least one panel")
	}
	w := 0.0
	for _, p := range panels {
		w = math.Max(w, p.Plot.W)
	}
	h := 0.0
	heights := make([]float64, len(panels))
	for i, p := range panels {
		heights[i] = titleH + p.Plot.H + float64(legendRows(p.Legend, padEdge, w))*legendH + 8
		h += heights[i]
	}
	var b bytes.Buffer
	header(&b, w, h, label)
	y := 0.0
	for i, p := range panels {
		fmt.Fprintf(&b, `<g transform="translate(0 %s)">`+"\n", f(y))
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="14" font-weight="bold" fill="#1f2328">%s</text>`+"\n", f(padEdge), f(16), Esc(fit(p.Title, w-2*padEdge, 14*1.1)))
		fmt.Fprintf(&b, `<g transform="translate(0 %s)">`+"\n", f(titleH))
		drawLines(&b, p.Plot)
		b.WriteString("</g>\n")
		legend(&b, p.Legend, padEdge, titleH+p.Plot.H+14, w)
		b.WriteString("</g>\n")
		y += heights[i]
	}
	b.WriteString("</svg>\n")
	return b.Bytes(), nil
}

func drawLines(b *bytes.Buffer, p LinePlot) {
	if p.Unit != "" {
		fmt.Fprintf(b, `<text x="%s" y="%s" fill="%s">%s</text>`+"\n", p.UnitX, p.UnitY, colorText, Esc(p.Unit))
	}
	for _, t := range p.YTicks {
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n", p.Plot.X0, t.Pos, p.Plot.X1, t.Pos, colorGrid)
		fmt.Fprintf(b, `<text x="%s" y="%s" dx="-6" dy="4" text-anchor="end" fill="%s">%s</text>`+"\n", p.Plot.X0, t.Pos, colorText, Esc(t.Label))
	}
	for _, t := range p.XTicks {
		fmt.Fprintf(b, `<text x="%s" y="%s" dy="16" text-anchor="middle" fill="%s">%s</text>`+"\n", t.Pos, p.Plot.Y1, colorText, Esc(t.Label))
	}
	fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n", p.Plot.X0, p.Plot.Y1, p.Plot.X1, p.Plot.Y1, colorAxis)
	for _, poly := range p.Bands {
		fmt.Fprintf(b, `<polygon points="%s" fill="%s" fill-opacity="0.14"/>`+"\n", poly, colorBand)
	}
	for _, l := range p.Levels {
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5" stroke-dasharray="2 3" stroke-opacity="0.8"><title>%s</title></line>`+"\n", l.X1, l.Y, l.X2, l.Y, l.Color, Esc(l.Title))
	}
	for _, m := range p.Marks {
		color := colorAxis
		if m.Worse {
			color = colorOut
		}
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5"><title>%s</title></line>`+"\n", m.X, m.Y0, m.X, m.Y1, color, Esc(m.Title))
		fmt.Fprintf(b, `<text x="%s" y="%s" dy="-3" text-anchor="%s" fill="%s">%s</text>`+"\n", m.X, m.Y0, m.Anchor, color, Esc(m.Label))
	}
	for _, l := range p.Lines {
		dash := ""
		if l.Dashed {
			dash = ` stroke-dasharray="5 4"`
		}
		fmt.Fprintf(b, `<path d="%s" fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round"%s/>`+"\n", l.D, l.Color, dash)
	}
	for _, d := range p.Dots {
		title := ""
		if d.Title != "" {
			title = "<title>" + Esc(d.Title) + "</title>"
		}
		if d.Out {
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="6.5" fill="none" stroke="%s" stroke-width="2"/>`+"\n", d.X, d.Y, colorOut)
		}
		fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3.5" fill="%s" stroke="#ffffff" stroke-width="1">%s</circle>`+"\n", d.X, d.Y, d.Color, title)
	}
}

// Segment is one key's part of a bar.
type Segment struct {
	Key   string
	Value float64
}

// Bar is one horizontal bar: Total long, split into its segments in order; what they
// leave of Total is drawn as the rest.
type Bar struct {
	Label    string
	Total    float64
	Segments []Segment
}

// BarsOptions shape a bar chart.
type BarsOptions struct {
	Title string
	Unit  string   // the value axis's unit, e.g. "GPU ms/token"
	Keys  []string // the segments' keys in legend (and colour) order
	Rest  string   // the legend's name of the rest, e.g. "other kernels"
	Width float64  // 0 takes 760
}

// WriteBars writes a self-contained SVG document of stacked horizontal bars, one per
// row, on a value axis from zero.
func WriteBars(bars []Bar, o BarsOptions) ([]byte, error) {
	if len(bars) == 0 {
		return nil, fmt.Errorf("a bar chart needs at least one bar")
	}
	if o.Width <= 0 {
		o.Width = 760
	}
	w := o.Width
	color := map[string]string{}
	for i, k := range o.Keys {
		color[k] = Palette[i%len(Palette)]
	}
	hi := 0.0
	for _, br := range bars {
		sum := 0.0
		for _, s := range br.Segments {
			sum += math.Max(s.Value, 0)
		}
		hi = math.Max(hi, math.Max(br.Total, sum))
	}
	if !(hi > 0) {
		hi = 1 // nothing to draw: an axis from zero all the same
	}
	a := NiceAxis(0, hi, 4)
	// Labels take at most 45 % of the width; the totals sit after the bars.
	labels := make([]string, len(bars))
	labelW := 0.0
	for i, br := range bars {
		labels[i] = fit(br.Label, 0.45*w, fontSize)
		labelW = math.Max(labelW, TextWidth(labels[i], fontSize))
	}
	totalW := 0.0
	for _, br := range bars {
		totalW = math.Max(totalW, TextWidth(fmt.Sprintf("%.*f", Decimals(a.Step)+1, br.Total), fontSize))
	}
	tickW := TextWidth(a.Label(a.Hi), fontSize)
	x0 := padEdge + labelW + 8
	x1 := w - padEdge - math.Max(totalW+6, tickW/2)
	rowH, barH := 24.0, 16.0
	y0 := titleH + 8
	y1 := y0 + rowH*float64(len(bars))
	items := make([]LegendItem, 0, len(o.Keys)+1)
	for _, k := range o.Keys {
		items = append(items, LegendItem{Label: k, Color: color[k], Kind: LegendBox})
	}
	if o.Rest != "" {
		items = append(items, LegendItem{Label: o.Rest, Color: colorRest, Kind: LegendBox})
	}
	h := y1 + 20 + fontSize + 10 + float64(legendRows(items, padEdge, w))*legendH + padEdge
	x := func(v float64) float64 { return x0 + (x1-x0)*v/a.Hi }
	var b bytes.Buffer
	header(&b, w, h, o.Title)
	fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="14" font-weight="bold" fill="#1f2328">%s</text>`+"\n", f(padEdge), f(16), Esc(fit(o.Title, w-2*padEdge, 14*1.1)))
	for _, v := range a.Ticks {
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n", f(x(v)), f(y0), f(x(v)), f(y1), colorGrid)
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" fill="%s">%s</text>`+"\n", f(x(v)), f(y1+16), colorText, a.Label(v))
	}
	fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" fill="%s">%s</text>`+"\n", f((x0+x1)/2), f(y1+20+fontSize), colorText, Esc(o.Unit))
	for i, br := range bars {
		y := y0 + rowH*float64(i) + (rowH-barH)/2
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="end" fill="#1f2328">%s</text>`+"\n", f(x0-8), f(y+barH-4), Esc(labels[i]))
		at := 0.0
		for _, s := range br.Segments {
			if s.Value <= 0 {
				continue
			}
			c, ok := color[s.Key]
			if !ok {
				c = colorRest
			}
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`+"\n",
				f(x(at)), f(y), f(x(at+s.Value)-x(at)), f(barH), c, Esc(fmt.Sprintf("%s, %s: %.3f %s", br.Label, s.Key, s.Value, o.Unit)))
			at += s.Value
		}
		if rest := br.Total - at; rest > 0 {
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`+"\n",
				f(x(at)), f(y), f(x(br.Total)-x(at)), f(barH), colorRest, Esc(fmt.Sprintf("%s, %s: %.3f %s", br.Label, o.Rest, rest, o.Unit)))
		}
		fmt.Fprintf(&b, `<text x="%s" y="%s" fill="%s">%s</text>`+"\n", f(x(math.Max(br.Total, at))+4), f(y+barH-4), colorText, fmt.Sprintf("%.*f", Decimals(a.Step)+1, br.Total))
	}
	fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n", f(x0), f(y0), f(x0), f(y1), colorAxis)
	legend(&b, items, padEdge, y1+20+fontSize+10+14, w)
	b.WriteString("</svg>\n")
	return b.Bytes(), nil
}
