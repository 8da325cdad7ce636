import { H4, HTMLTable } from '@blueprintjs/core';
import { agreementGaps, type EndpointAgreement, type EndpointDefinition } from '@lamina/domain';
import type { ReactNode } from 'react';
import { NO_VALUE, formatOutcome, formatPercent } from './formatOutcome';

/** A figure, or '—' with why it is missing (shown, not only in a tooltip). */
function Figure({ text, why }: { text: string | null; why: string | null }) {
  if (text !== null) return <>{text}</>;
  return (
    <>
      {NO_VALUE} <span className="bp6-text-muted lamina-agreement-why">{why}</span>
    </>
  );
}

const KAPPA_NAMES = { COHEN: 'Cohen’s kappa', FLEISS: 'Fleiss’ kappa' } as const;

/**
 * The agreement between the study's primary readers on one endpoint (GET /api/studies/{id}/agreement;
 * docs/OUTCOMES.md, Agreement): ICC(2,1) with its 95 % interval, kappa (which one), percent
 * agreement, the Bland–Altman mean difference and limits, and the case counts they are over. A
 * figure that cannot be computed is '—' with the reason (agreementGaps).
 */
export function AgreementPanel({
  agreement,
  endpoint,
}: {
  agreement: EndpointAgreement;
  endpoint: EndpointDefinition;
}) {
  const gaps = agreementGaps(agreement, endpoint);
  const kappaName = agreement.kappaKind
    ? KAPPA_NAMES[agreement.kappaKind]
    : agreement.readers > 2
      ? KAPPA_NAMES.FLEISS
      : 'Kappa';
  const rows: [string, ReactNode][] = [
    ['Cases read by two or more readers', String(agreement.cases)],
    ['Readers per case in the figures', String(agreement.readers)],
    ['Cases with every value', String(agreement.valuedCases)],
    ['Cases with every positive/negative reading', String(agreement.categorisedCases)],
    [
      'ICC(2,1)',
      <>
        <Figure text={agreement.icc === null ? null : formatOutcome(agreement.icc)} why={gaps.icc} />
        {agreement.icc !== null && (
          <>
            {' '}
            <span className="lamina-agreement-ci">
              (95 % CI{' '}
              <Figure
                text={
                  agreement.iccLower95 === null || agreement.iccUpper95 === null
                    ? null
                    : `${formatOutcome(agreement.iccLower95)} to ${formatOutcome(agreement.iccUpper95)}`
                }
                why={gaps.iccInterval}
              />
              )
            </span>
          </>
        )}
      </>,
    ],
    [
      kappaName,
      <Figure key="k" text={agreement.kappa === null ? null : formatOutcome(agreement.kappa)} why={gaps.kappa} />,
    ],
    [
      'Percent agreement',
      <Figure
        key="p"
        text={agreement.percentAgreement === null ? null : formatPercent(agreement.percentAgreement)}
        why={gaps.percentAgreement}
      />,
    ],
    [
      'Mean difference (A − B)',
      <Figure
        key="m"
        text={agreement.meanDifference === null ? null : formatOutcome(agreement.meanDifference)}
        why={gaps.blandAltman}
      />,
    ],
    [
      '95 % limits of agreement',
      <Figure
        key="l"
        text={
          agreement.loaLower === null || agreement.loaUpper === null
            ? null
            : `${formatOutcome(agreement.loaLower)} to ${formatOutcome(agreement.loaUpper)}`
        }
        why={gaps.blandAltman}
      />,
    ],
  ];
  return (
    <section className="lamina-agreement" aria-labelledby="agreement-title">
      <H4 id="agreement-title">Agreement: {endpoint.label}</H4>
      <HTMLTable compact className="lamina-agreement-table" aria-labelledby="agreement-title">
        <tbody>
          {rows.map(([label, value]) => (
            <tr key={label}>
              <th scope="row">{label}</th>
              <td>{value}</td>
            </tr>
          ))}
        </tbody>
      </HTMLTable>
    </section>
  );
}
