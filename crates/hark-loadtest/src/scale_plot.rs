//! The scale scenario's chart: one panel per figure (RSS, put p99), each
//! server's series against live keys, drawn as SVG with `plotters`.

use std::path::Path;

use plotters::prelude::*;

/// One line of the chart.
pub struct Series {
    pub label: String,
    /// 0: RSS (MiB), 1: put p99 (ms).
    pub panel: usize,
    /// (live keys, value).
    pub points: Vec<(f64, f64)>,
}

const PANELS: [(&str, &str); 2] = [("member RSS", "MiB"), ("put p99 under a fixed load", "ms")];

pub fn write(path: &Path, series: &[Series]) -> Result<(), String> {
    draw(path, series).map_err(|e| format!("drawing {}: {e}", path.display()))
}

fn draw(path: &Path, series: &[Series]) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (1200, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let areas = root.split_evenly((1, PANELS.len()));
    for (panel, area) in areas.iter().enumerate() {
        let (title, unit) = PANELS[panel];
        let lines: Vec<&Series> = series.iter().filter(|s| s.panel == panel).collect();
        let all = lines.iter().flat_map(|s| s.points.iter());
        let x_max = all.clone().map(|p| p.0 / 1e6).fold(0.0, f64::max).max(0.01) * 1.05;
        let y_max = all.map(|p| p.1).fold(0.0, f64::max).max(0.01) * 1.1;
        let mut chart = ChartBuilder::on(area)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..x_max, 0.0..y_max)?;
        chart
            .configure_mesh()
            .x_desc("live keys (millions)")
            .y_desc(unit)
            .draw()?;
        for s in &lines {
            let color = if s.label.starts_with("hark") {
                BLUE
            } else {
                RED
            };
            let points: Vec<(f64, f64)> = s.points.iter().map(|&(x, y)| (x / 1e6, y)).collect();
            chart
                .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
                .label(s.label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
            chart.draw_series(
                points
                    .into_iter()
                    .map(|p| Circle::new(p, 3, color.filled())),
            )?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
    }
    root.present()?;
    Ok(())
}
