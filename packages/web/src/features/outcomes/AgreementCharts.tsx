import type { EndpointAgreement, EndpointDefinition } from '@lamina/domain';
import { CartesianGrid, ReferenceLine, Scatter, ScatterChart, Tooltip as ChartTooltip, XAxis, YAxis } from 'recharts';
import { formatOutcome, niceAxis } from './formatOutcome';

export interface ValuePair {
  caseId: number;
  a: number;
  b: number;
}

const WIDTH = 440;
const HEIGHT = 320;
const MARGIN = { top: 16, right: 24, bottom: 36, left: 20 };
const POINT = '#2d72d2';
const LINE = '#5f6b7c';

const tick = (value: number) => formatOutcome(value);

/**
 * Reader A against reader B, one point per case, with the identity line (perfect agreement): A is,
 * per case, the primary reader with the smaller id — the order the agreement's figures use.
 */
function ReaderScatter({ pairs, label }: { pairs: readonly ValuePair[]; label: string }) {
  const axis = niceAxis(pairs.flatMap((p) => [p.a, p.b]));
  const [low, high] = axis.domain;
  const title = `Reader A against reader B: ${label}`;
  return (
    <figure className="lamina-chart" aria-labelledby="reads-scatter-title">
      <figcaption id="reads-scatter-title">{title}</figcaption>
      <ScatterChart
        width={WIDTH}
        height={HEIGHT}
        margin={MARGIN}
        title={title}
        desc={`${pairs.length} cases; the dashed line is perfect agreement (A = B).`}
      >
        <CartesianGrid strokeDasharray="3 3" />
        <XAxis
          type="number"
          dataKey="a"
          name="Reader A"
          domain={axis.domain}
          ticks={axis.ticks}
          tickFormatter={tick}
          label={{ value: 'Reader A', position: 'insideBottom', offset: -24 }}
        />
        <YAxis
          type="number"
          dataKey="b"
          name="Reader B"
          domain={axis.domain}
          ticks={axis.ticks}
          tickFormatter={tick}
          label={{ value: 'Reader B', angle: -90, position: 'insideLeft', offset: 4 }}
        />
        <ReferenceLine
          segment={[
            { x: low, y: low },
            { x: high, y: high },
          ]}
          stroke={LINE}
          strokeDasharray="6 4"
          className="lamina-chart-identity"
        />
        <ChartTooltip formatter={(value) => (typeof value === 'number' ? formatOutcome(value) : String(value))} />
        <Scatter name="Cases" data={[...pairs]} fill={POINT} isAnimationActive={false} />
      </ScatterChart>
    </figure>
  );
}

/**
 * Bland–Altman: per case the mean of the two readers on x and their difference A − B on y, with
 * lines at the mean difference and the 95 % limits of agreement the agreement route computed.
 */
function BlandAltmanPlot({
  pairs,
  label,
  agreement,
}: {
  pairs: readonly ValuePair[];
  label: string;
  agreement: EndpointAgreement;
}) {
  const points = pairs.map((p) => ({ caseId: p.caseId, mean: (p.a + p.b) / 2, difference: p.a - p.b }));
  const lines = [
    { y: agreement.meanDifference, name: 'Mean difference', dash: undefined },
    { y: agreement.loaLower, name: 'Lower limit', dash: '6 4' },
    { y: agreement.loaUpper, name: 'Upper limit', dash: '6 4' },
  ].filter((line): line is { y: number; name: string; dash: string | undefined } => line.y !== null);
  const x = niceAxis(points.map((p) => p.mean));
  const y = niceAxis([...points.map((p) => p.difference), ...lines.map((l) => l.y)]);
  const title = `Bland–Altman: ${label}`;
  return (
    <figure className="lamina-chart" aria-labelledby="reads-bland-altman-title">
      <figcaption id="reads-bland-altman-title">{title}</figcaption>
      <ScatterChart
        width={WIDTH}
        height={HEIGHT}
        margin={MARGIN}
        title={title}
        desc={`${pairs.length} cases; lines at the mean difference and the 95 % limits of agreement.`}
      >
        <CartesianGrid strokeDasharray="3 3" />
        <XAxis
          type="number"
          dataKey="mean"
          name="Mean of A and B"
          domain={x.domain}
          ticks={x.ticks}
          tickFormatter={tick}
          label={{ value: 'Mean of readers A and B', position: 'insideBottom', offset: -24 }}
        />
        <YAxis
          type="number"
          dataKey="difference"
          name="A − B"
          domain={y.domain}
          ticks={y.ticks}
          tickFormatter={tick}
          label={{ value: 'Difference A − B', angle: -90, position: 'insideLeft', offset: 4 }}
        />
        {lines.map((line) => (
          <ReferenceLine
            key={line.name}
            y={line.y}
            stroke={LINE}
            strokeDasharray={line.dash}
            className="lamina-chart-reference"
            label={{ value: `${line.name} ${formatOutcome(line.y)}`, position: 'insideTopRight', fontSize: 11 }}
          />
        ))}
        <ChartTooltip formatter={(value) => (typeof value === 'number' ? formatOutcome(value) : String(value))} />
        <Scatter name="Cases" data={points} fill={POINT} isAnimationActive={false} />
      </ScatterChart>
    </figure>
  );
}

/** The agreement panel's two plots of one endpoint (needs the pairs; the caller shows the empty state). */
export function AgreementCharts({
  pairs,
  endpoint,
  agreement,
}: {
  pairs: readonly ValuePair[];
  endpoint: EndpointDefinition;
  agreement: EndpointAgreement;
}) {
  return (
    <div className="lamina-charts">
      <ReaderScatter pairs={pairs} label={endpoint.label} />
      <BlandAltmanPlot pairs={pairs} label={endpoint.label} agreement={agreement} />
    </div>
  );
}
