import { SPEC_IMAGE_EXTENSIONS } from '@lamina/domain';
import { useConfig } from '../../api/config';

/**
 * The image extensions this server reads (GET /api/config, issue 31). Until the config has loaded
 * (or when it could not be), the specification's three, which every server reads: the chooser
 * never offers a file the server would refuse.
 */
export function useImageExtensions(): readonly string[] {
  const config = useConfig();
  return config.data?.imageExtensions ?? SPEC_IMAGE_EXTENSIONS;
}
