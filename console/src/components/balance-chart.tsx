import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export interface BalancePoint {
  /** Unix seconds. */
  t: number;
  /** Whole tokens (a float is fine for drawing; every figure shown as text stays exact). */
  balance: number;
}

/**
 * The balance over time, drawn by uPlot on a canvas. uPlot positions its parts through the
 * CSSOM, which the console's CSP allows (no style attributes, no inline <style>).
 */
export function BalanceChart({ points, label }: { points: BalancePoint[]; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    // Steps, not slopes: the balance changes at movements, between the points it is flat.
    const stepped = uPlot.paths.stepped?.({ align: 1 });
    const plot = new uPlot(
      {
        width: Math.max(el.clientWidth, 200),
        height: 280,
        legend: { show: false },
        scales: { x: { time: true } },
        series: [
          {},
          {
            label: 'Balance (ONS)',
            stroke: '#0a58ca',
            width: 2,
            fill: 'rgba(10,88,202,0.08)',
            ...(stepped ? { paths: stepped } : {}),
          },
        ],
        axes: [{}, { label: 'ONS', size: 70 }],
      },
      [points.map((p) => p.t), points.map((p) => p.balance)],
      el,
    );
    return () => plot.destroy();
  }, [points]);
  return <div class="chart" ref={box} role="img" aria-label={label} />;
}
