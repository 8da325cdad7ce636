import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  LABEL_PERMISSIONS,
  notifyUploadRequestSchema,
  studyImageListQuerySchema,
  studyImageListResponseSchema,
  type Permission,
  notifyUploadResponseSchema,
  imageViewSchema,
  signedUrlResponseSchema,
  EDIT_IMAGE_PERMISSIONS,
  ACCEPT_AI_PERMISSION,
  TOGGLE_VISIBILITY_PERMISSION,
  acceptAiRequestSchema,
  IMAGE_ACTION_MESSAGES,
  archiveImageRequestSchema,
  copyImageRequestSchema,
  editImageRequestSchema,
  imageActionResponseSchema,
} from '@lamina/domain';
import { policy, studyFromBody, studyFromParam } from '../../platform/rbac/policy.js';
import { UPLOAD_PERMISSIONS } from '../uploads/uploadRoutes.js';
import { actorOf, principalOf } from '../../platform/http/requestContext.js';
import type { Config } from '../../platform/config.js';
import type { Db } from '../../platform/db/database.js';
import type { TileTokens } from '../../platform/tiles/tileToken.js';
import { idParams } from '../../platform/http/params.js';
import { presentImage, presentStudyImageRow, tileUrlOptions } from './imagePresenter.js';
import type { ImageService } from './imageService.js';
import { imageScope } from '../../access/imageScope.js';
import { ImageEditService } from './imageEditService.js';

/**
 * Who may open an image (GET /api/images/{id}: the viewer's Image, with its file name and a tile
 * URL): the image viewer. The Image Management lists do not need it (their rows come from their own
 * routes), so a role holding only those lists (LIS) gets no viewer (issue 26).
 */
const VIEW_IMAGE: readonly Permission[] = ['AP_ImageViewer_ViewimageViewer'];

export interface ImageRouteDeps {
  db: Db;
  config: Config;
  tileTokens: TileTokens;
  images: ImageService;
}

/**
 * Images: the viewer's Image with its tile URL, the study page's Images tab and its row actions,
 * label and macro images (view-label permission only: labels can carry patient identifiers), the
 * signed download of the original, and the upload notification. Registering an upload (and
 * replacing an image) and moving an image are commands (commands/registerImageRoutes.ts,
 * commands/moveImageRoutes.ts).
 */
export function imageRoutes({ db, config, tileTokens, images }: ImageRouteDeps) {
  const edits = new ImageEditService(db);
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    /** Tile URLs for the request's user and session (the token stops when either loses access). */
    const tiles = (request: FastifyRequest) =>
      tileUrlOptions(tileTokens, config.tileServerLocation, principalOf(request), request.session?.sessionId ?? '');

    r.post(
      '/api/images/notify-upload',
      {
        config: { policy: policy.anyOf(UPLOAD_PERMISSIONS, studyFromBody()) },
        schema: { body: notifyUploadRequestSchema, response: { 200: notifyUploadResponseSchema } },
      },
      async (request) => {
        const { studyId, numFiles, failures } = request.body;
        const result = await images.notifyUpload(principalOf(request), actorOf(request), studyId, numFiles, failures);
        return {
          success: true as const,
          message: `Notified ${result.recipients} study administrator${result.recipients === 1 ? '' : 's'}`,
          ...result,
        };
      },
    );

    r.get(
      '/api/images/:id',
      {
        config: { policy: policy.anyOf(VIEW_IMAGE, imageScope) },
        schema: { params: idParams, response: { 200: imageViewSchema } },
      },
      async (request) => {
        const principal = principalOf(request);
        const row = await images.image(request.params.id);
        return presentImage(row, tiles(request), principal);
      },
    );

    // The row actions of the study page's Images tab (issue 11; doc 2 §2.5, §7).
    r.patch(
      '/api/images/:id',
      {
        config: { policy: policy.anyOf(EDIT_IMAGE_PERMISSIONS, imageScope) },
        schema: { params: idParams, body: editImageRequestSchema, response: { 200: imageActionResponseSchema } },
      },
      async (request) => {
        await edits.edit(principalOf(request), actorOf(request), request.params.id, request.body);
        return { success: true as const, message: IMAGE_ACTION_MESSAGES.updated, imageId: request.params.id };
      },
    );

    r.patch(
      '/api/images/:id/toggle-image-visibility',
      {
        config: { policy: policy.anyOf([TOGGLE_VISIBILITY_PERMISSION], imageScope) },
        schema: { params: idParams, response: { 200: imageActionResponseSchema } },
      },
      async (request) => {
        const hidden = await edits.toggleVisibility(actorOf(request), request.params.id);
        return {
          success: true as const,
          message: hidden ? IMAGE_ACTION_MESSAGES.hiddenFromReaders : IMAGE_ACTION_MESSAGES.shownToReaders,
          imageId: request.params.id,
        };
      },
    );

    r.patch(
      '/api/images/:id/accept-ai-annotations',
      {
        config: { policy: policy.anyOf([ACCEPT_AI_PERMISSION], imageScope) },
        schema: { params: idParams, body: acceptAiRequestSchema, response: { 200: imageActionResponseSchema } },
      },
      async (request) => {
        const accepted = await edits.acceptAi(actorOf(request), request.params.id, request.body?.acceptAiAnnotations);
        return {
          success: true as const,
          message: accepted ? IMAGE_ACTION_MESSAGES.aiAccepted : IMAGE_ACTION_MESSAGES.aiRejected,
          imageId: request.params.id,
        };
      },
    );

    r.post(
      '/api/images/:id/copy',
      {
        config: { policy: policy.anyOf(['IM_ImagesListTab_CopyImage'], imageScope) },
        schema: { params: idParams, body: copyImageRequestSchema, response: { 200: imageActionResponseSchema } },
      },
      async (request) => {
        const name = request.body.name ?? request.body.duplicateImageName;
        const id = await edits.copy(actorOf(request), request.params.id, name);
        return { success: true as const, message: IMAGE_ACTION_MESSAGES.copied, imageId: id };
      },
    );

    r.post(
      '/api/images/:id',
      {
        config: { policy: policy.anyOf(['IM_ImagesListTab_Archive'], imageScope) },
        schema: { params: idParams, body: archiveImageRequestSchema, response: { 200: imageActionResponseSchema } },
      },
      async (request) => {
        await edits.archive(actorOf(request), request.params.id, request.body.reasonForChange);
        return { success: true as const, message: IMAGE_ACTION_MESSAGES.archived, imageId: request.params.id };
      },
    );

    r.get(
      '/api/studies/:id/images',
      {
        config: { policy: policy.anyOf(['S_Main_ViewImagesTab'], studyFromParam('id')) },
        schema: {
          params: idParams,
          querystring: studyImageListQuerySchema,
          response: { 200: studyImageListResponseSchema },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const { rows, total } = await images.studyImages(principal, request.params.id, request.query);
        return { success: true as const, images: rows.map((row) => presentStudyImageRow(row, principal)), total };
      },
    );

    for (const kind of ['label', 'macro'] as const) {
      r.get(
        `/api/images/:id/${kind}`,
        { config: { policy: policy.anyOf(LABEL_PERMISSIONS, imageScope) }, schema: { params: idParams } },
        async (request, reply) => {
          const picture = await images.labelPicture(principalOf(request), request.params.id, kind);
          return reply
            .type(kind === 'label' ? 'image/png' : 'image/jpeg')
            .header('Content-Length', picture.size)
            .header('Cache-Control', 'private, max-age=300')
            .send(picture.stream);
        },
      );
    }

    r.get(
      '/api/signed-urls/image/:id',
      {
        config: { policy: policy.anyOf(['IM_ImagesListTab_DownloadImages'], imageScope) },
        schema: { params: idParams, response: { 200: signedUrlResponseSchema } },
      },
      async (request) => ({
        success: true as const,
        url: await images.downloadUrl(actorOf(request), request.params.id, config.uploadUrlTtlSeconds),
      }),
    );
  };
}
