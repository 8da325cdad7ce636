import { errorMessage } from '../../../api/ApiError';
import { showToast } from '../../../components/appToaster';
import { fetchDownloadUrl } from './api';

/** Opens an image's original file through a short-lived signed link, in a new tab (doc 3 §7). */
export async function downloadImage(imageId: number): Promise<void> {
  try {
    window.open(await fetchDownloadUrl(imageId), '_blank', 'noopener');
  } catch (error) {
    void showToast(errorMessage(error), 'danger');
  }
}
