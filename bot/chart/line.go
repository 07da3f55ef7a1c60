package chart

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Point is one night of a series.
type Point struct {
	Date  time.Time
	Value float64
	// Lo and Hi are the noise band the night was judged against; Hi 0 when it had none.
	Lo, Hi float64
	Href   string // "" draws the point without a link
	Title  string // the point's tooltip
}

// Out says the point lies outside its band.
func (p Point) Out() bool { return p.Hi > 0 && (p.Value < p.Lo || p.Value > p.Hi) }

// Series is one runtime's nights; the band is drawn for every series that has one.
type Series struct {
	Name   string
	Class  string // the CSS class of the trend page, e.g. "mlxcel"
	Color  string // the stroke of a standalone SVG, e.g. "#0969da"
	Dashed bool
	Points []Point
	// Levels are the series' segments of stable performance, each drawn as a level
	// line over its nights; Changes the nights a new level started, each marked by a
	// vertical rule with its label.
	Levels  []Level
	Changes []Change
}

// Level is one segment: its level from its first to its last night.
type Level struct {
	From, To time.Time
	Value    float64
}

// Change is a change point: the first night at a new level.
type Change struct {
	Date  time.Time
	Label string // short, above the rule, e.g. "-15.0%"
	Title string // the tooltip
	Worse bool   // a regression (drawn in the alarm colour)
}

// LineOptions shape a line chart.
type LineOptions struct {
	Width, Height float64 // of the viewBox; 0 takes 420 x 230
	Unit          string  // the y axis's unit, e.g. "tok/s"
}

// Line is a series' polyline.
type Line struct {
	Class, Color string
	Dashed       bool
	D            string
}

// Dot is one point; Out marks a point outside its band.
type Dot struct {
	Class, Color string
	X, Y         string
	Href, Title  string
	Out          bool
}

// Tick is an axis label at a position.
type Tick struct {
	Pos   string
	Label string
}

// LevelLine is a segment's level line.
type LevelLine struct {
	Class, Color string
	X1, X2, Y    string
	Title        string
}

// Mark is a change point's vertical rule over the plot, with its label at the top.
type Mark struct {
	X, Y0, Y1    string
	Label, Title string
	Worse        bool
	Anchor       string // the label's text-anchor: start, middle or end, so it stays inside
}

// Rect is the plot area.
type Rect struct{ X0, Y0, X1, Y1 string }

// LinePlot is the geometry of a line chart in SVG user units: what the trend page's
// template and WriteLines draw.
type LinePlot struct {
	W, H     float64
	ViewBox  string
	Plot     Rect
	Unit     string // the unit's label, above the y axis
	UnitX    string
	UnitY    string
	Bands    []string // polygons, "x,y x,y ..."
	Lines    []Line
	Dots     []Dot
	YTicks   []Tick
	XTicks   []Tick
	Axis     Axis
	HasBand  bool
	Outliers int
	Levels   []LevelLine
	Marks    []Mark
}

const (
	fontSize = 12.0
	padEdge  = 6.0 // kept free at every edge of the viewBox
)

// Lines lays out a line chart of the series over their dates. The y axis follows
// ValueAxis over every value and band edge; the x axis spans the dates, a day either
// side when there is only one.
func Lines(series []Series, o LineOptions) (LinePlot, error) {
	if o.Width <= 0 || o.Height <= 0 {
		o.Width, o.Height = 420, 230
	}
	var vals []float64
	var dates []time.Time
	for _, s := range series {
		for _, p := range s.Points {
			vals = append(vals, p.Value)
			dates = append(dates, p.Date)
			if p.Hi > 0 {
				vals = append(vals, p.Lo, p.Hi)
			}
		}
		for _, l := range s.Levels {
			vals = append(vals, l.Value)
		}
	}
	if len(dates) == 0 {
		return LinePlot{}, fmt.Errorf("a chart needs at least one point")
	}
	t0, t1 := slices.MinFunc(dates, time.Time.Compare), slices.MaxFunc(dates, time.Time.Compare)
	if !t1.After(t0) {
		t0, t1 = t0.AddDate(0, 0, -1), t1.AddDate(0, 0, 1)
	}
	a := ValueAxis(vals)
	p := LinePlot{W: o.Width, H: o.Height, ViewBox: fmt.Sprintf("0 0 %g %g", o.Width, o.Height), Axis: a, Unit: o.Unit}
	// The left margin holds the widest tick label; the top one the unit; the bottom
	// one the dates; the right one half a date label.
	labelW := 0.0
	for _, v := range a.Ticks {
		labelW = math.Max(labelW, TextWidth(a.Label(v), fontSize))
	}
	dateW := TextWidth("00-00", fontSize)
	left := padEdge + labelW + 6
	right := padEdge + dateW/2
	top := padEdge + fontSize + 8
	bottom := padEdge + fontSize + 10
	if o.Unit == "" {
		top = padEdge + fontSize/2
	}
	x0, x1, y0, y1 := left, o.Width-right, top, o.Height-bottom
	x := func(t time.Time) float64 { return x0 + (x1-x0)*t.Sub(t0).Seconds()/t1.Sub(t0).Seconds() }
	y := func(v float64) float64 { return y1 - (y1-y0)*(v-a.Lo)/(a.Hi-a.Lo) }
	p.Plot = Rect{f(x0), f(y0), f(x1), f(y1)}
	p.UnitX, p.UnitY = f(padEdge), f(padEdge+fontSize-2)
	for _, v := range a.Ticks {
		p.YTicks = append(p.YTicks, Tick{Pos: f(y(v)), Label: a.Label(v)})
	}
	for _, t := range DateTicks(t0, t1) {
		p.XTicks = append(p.XTicks, Tick{Pos: f(x(t)), Label: t.Format("01-02")})
	}
	for _, s := range series {
		// The band: one polygon per run of consecutive nights that have one.
		var upper, lower []string
		flush := func() {
			if len(upper) > 1 {
				slices.Reverse(lower)
				p.Bands = append(p.Bands, strings.Join(append(upper, lower...), " "))
			}
			upper, lower = nil, nil
		}
		for _, pt := range s.Points {
			if pt.Hi <= 0 {
				flush()
				continue
			}
			upper = append(upper, f(x(pt.Date))+","+f(y(pt.Hi)))
			lower = append(lower, f(x(pt.Date))+","+f(y(pt.Lo)))
		}
		flush()
	}
	p.HasBand = len(p.Bands) > 0
	for _, s := range series {
		for _, l := range s.Levels {
			p.Levels = append(p.Levels, LevelLine{Class: s.Class, Color: s.Color, X1: f(x(l.From)), X2: f(x(l.To)), Y: f(y(l.Value)),
				Title: fmt.Sprintf("%s level %s from %s to %s", s.Name, a.Label(l.Value), l.From.Format(time.DateOnly), l.To.Format(time.DateOnly))})
		}
		for _, c := range s.Changes {
			cx := x(c.Date)
			m := Mark{X: f(cx), Y0: f(y0), Y1: f(y1), Label: c.Label, Title: c.Title, Worse: c.Worse, Anchor: "middle"}
			// Keep the label inside the viewBox: anchor it at its edge near the sides.
			if half := TextWidth(c.Label, fontSize) / 2; cx-half < padEdge {
				m.Anchor = "start"
			} else if cx+half > o.Width-padEdge {
				m.Anchor = "end"
			}
			p.Marks = append(p.Marks, m)
		}
	}
	for _, s := range series {
		if len(s.Points) == 0 {
			continue
		}
		var d strings.Builder
		for i, pt := range s.Points {
			cmd := "L"
			if i == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&d, "%s%s,%s", cmd, f(x(pt.Date)), f(y(pt.Value)))
		}
		p.Lines = append(p.Lines, Line{Class: s.Class, Color: s.Color, Dashed: s.Dashed, D: d.String()})
		for _, pt := range s.Points {
			p.Dots = append(p.Dots, Dot{Class: s.Class, Color: s.Color, X: f(x(pt.Date)), Y: f(y(pt.Value)), Href: pt.Href, Title: pt.Title, Out: pt.Out()})
			if pt.Out() {
				p.Outliers++
			}
		}
	}
	return p, nil
}
