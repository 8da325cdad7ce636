import type { ImImageRecord } from '@lamina/domain';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { errorMessage } from '../../api/ApiError';
import { useDebouncedValue } from '../../components/useDebouncedValue';
import { ChoiceTypeahead } from '../reports/ChoiceTypeahead';
import type { Choice } from '../reports/api';
import { fetchImImages } from './api';

/** Images offered per search. */
const MATCHES = 10;

/** 'S1001_A.tif · DEMO-UC-001 · ENDO-1001': what tells two images apart in the list. */
export function imageChoiceName(row: ImImageRecord): string {
  return [row.imageFilename ?? `Image ${row.id}`, row.studyName, row.endoProcedureId ?? row.histoProcedureId]
    .filter((part): part is string => typeof part === 'string' && part !== '')
    .join(' · ');
}

/**
 * The Import Annotations dialog's optional image (beyond the spec): a type-ahead over the Image
 * Management image list (the user's own search and visibility). Without a choice, the server links
 * each file to the image its [ImageInfo] names.
 */
export function MldImagePicker({
  selected,
  onSelect,
  disabled,
}: {
  selected: Choice | null;
  onSelect: (choice: Choice | null) => void;
  disabled?: boolean;
}) {
  const [text, setText] = useState('');
  const search = useDebouncedValue(text.trim());
  const matches = useQuery({
    queryKey: ['imageManagement', 'mldImagePicker', search],
    queryFn: ({ signal }) =>
      fetchImImages(
        { filters: { searchText: search || undefined }, pageIndex: 0, pageSize: MATCHES, sort: '-uploadedAt' },
        signal,
      ),
    enabled: !disabled,
    staleTime: 30_000,
  });
  const items = matches.data ? matches.data.results.map((row) => ({ id: row.id, name: imageChoiceName(row) })) : null;
  return (
    <fieldset disabled={disabled} className="lamina-mld-image-picker">
      <ChoiceTypeahead
        label="Image (optional)"
        placeholder="Search images by name, case or study"
        text={text}
        onTextChange={setText}
        items={matches.isError ? [] : items}
        error={matches.isError ? errorMessage(matches.error) : null}
        hint={
          selected
            ? 'Every file of this upload is imported onto this image.'
            : 'Leave empty to link each file to the image named inside it.'
        }
        selected={selected}
        onSelect={onSelect}
        noMatches="No images match"
      />
    </fieldset>
  );
}
