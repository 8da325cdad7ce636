import { Classes } from '@blueprintjs/core';

/**
 * The line under the file chooser: the extensions the server reads, and — a .zip being several
 * formats in one — what a .zip may hold (issue 31); for a new upload, that .dcm files chosen
 * together go as one series.
 */
export function AcceptedFilesHint({ extensions, oneFile }: { extensions: readonly string[]; oneFile: boolean }) {
  return (
    <p className={Classes.TEXT_MUTED}>
      Accepted files: {extensions.join(', ')}
      {oneFile ? ' (one file)' : ''}
      {extensions.includes('.zip') && (
        <>
          <br />
          {/* Small type: one line at the dialog's 600 px. */}
          <span className={Classes.TEXT_SMALL}>
            A .zip: a MIRAX .mrxs with its folder, a Hamamatsu .vms with its images, or one DICOM series
          </span>
        </>
      )}
      {!oneFile && extensions.includes('.dcm') && extensions.includes('.zip') && (
        <>
          <br />
          <span className={Classes.TEXT_SMALL}>Several .dcm files chosen together are sent as one series (.zip)</span>
        </>
      )}
    </p>
  );
}
