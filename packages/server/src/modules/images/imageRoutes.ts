import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  createImageRequestSchema,
  IMAGE_MESSAGES,
  notifyUploadRequestSchema,
  studyImageListQuerySchema,
  studyImageListResponseSchema,
  type Permission,
  type StudyImageSortKey,
} from '@lamina/domain';
import { policy, studyFromBody, studyFromParam } from '../../platform/rbac/policy.js';
import { actorOf, principalOf } from '../../platform/http/requestContext.js';
import { NotFoundError } from '../../platform/errors.js';
import { recordAudit } from '../../platform/audit/audit.js';
import type { Config } from '../../platform/config.js';
import type { Db } from '../../platform/db/database.js';
import type { ObjectStorage } from '../../platform/storage/storage.js';
import type { TileTokens } from '../../platform/tiles/tileToken.js';
import { UPLOAD_PERMISSIONS } from '../uploads/uploadRoutes.js';
import { pageWindow, parseSort } from '../studies/paging.js';
import { listStudyImages } from './imageQueries.js';
import { presentImage, presentStudyImageRow, TILE_TOKEN_TTL_SECONDS } from './imagePresenter.js';
import type { ImageService } from './imageService.js';

/** Who may open an image: the viewer, the study page's images tab, or the image management list. */
const VIEW_IMAGE: readonly Permission[] = [
  'AP_ImageViewer_ViewimageViewer',
  'S_Main_ViewImagesTab',
  'IM_ImageListTab_ViewImageslistTab',
];

const idParams = z.object({ id: z.coerce.number().int().positive().max(2_147_483_647) });

export interface ImageRouteDeps {
  db: Db;
  config: Config;
  storage: ObjectStorage;
  tileTokens: TileTokens;
  images: ImageService;
}

/**
 * Images: register an upload (and replace an image), the viewer's Image with its tile URL, label
 * and macro images (view-label permission only: labels can carry patient identifiers), the signed
 * download of the original, and the upload notification.
 */
export function imageRoutes({ db, config, storage, tileTokens, images }: ImageRouteDeps) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const tiles = (userId: number) => ({
      tileTokens,
      tileServerLocation: config.tileServerLocation,
      userId,
      ttlSeconds: TILE_TOKEN_TTL_SECONDS,
    });

    r.post(
      '/api/images',
      {
        config: { policy: policy.anyOf(UPLOAD_PERMISSIONS, { study: studyFromBody() }) },
        schema: { body: createImageRequestSchema },
      },
      async (request) => {
        const principal = principalOf(request);
        const row = await images.register(principal, actorOf(request), request.body);
        return { success: true, image: presentImage(row, tiles(principal.id)) };
      },
    );

    r.post(
      '/api/images/notify-upload',
      {
        config: { policy: policy.anyOf(UPLOAD_PERMISSIONS, { study: studyFromBody() }) },
        schema: { body: notifyUploadRequestSchema },
      },
      async (request) => {
        const { studyId, numFiles, failures } = request.body;
        const result = await images.notifyUpload(principalOf(request), actorOf(request), studyId, numFiles, failures);
        return {
          success: true,
          message: `Notified ${result.recipients} study administrator${result.recipients === 1 ? '' : 's'}`,
          ...result,
        };
      },
    );

    r.get(
      '/api/images/:id',
      { config: { policy: policy.anyOf(VIEW_IMAGE) }, schema: { params: idParams } },
      async (request) => {
        const principal = principalOf(request);
        const row = await images.visibleImage(principal, request.params.id);
        return presentImage(row, tiles(principal.id));
      },
    );

    r.get(
      '/api/studies/:id/images',
      {
        config: { policy: policy.anyOf(['S_Main_ViewImagesTab'], { study: studyFromParam('id') }) },
        schema: {
          params: idParams,
          querystring: studyImageListQuerySchema,
          response: { 200: studyImageListResponseSchema },
        },
      },
      async (request) => {
        const { name, hasQueries, isUnassigned, page, pageSize, sort } = request.query;
        const { key, descending } = parseSort<StudyImageSortKey>(sort);
        const { rows, total } = await listStudyImages(db, {
          studyId: request.params.id,
          name: name?.trim() || undefined,
          hasQueries: hasQueries === 'true',
          isUnassigned: isUnassigned === 'true',
          sort: key,
          descending,
          ...pageWindow(page, pageSize),
        });
        return { success: true as const, images: rows.map(presentStudyImageRow), total };
      },
    );

    for (const kind of ['label', 'macro'] as const) {
      r.get(
        `/api/images/:id/${kind}`,
        { config: { policy: policy.anyOf(['AP_ImageViewer_ViewLabel']) }, schema: { params: idParams } },
        async (request, reply) => {
          const row = await images.visibleImage(principalOf(request), request.params.id);
          const key = kind === 'label' ? row.label_key : row.macro_key;
          const head = key ? await storage.head(key) : null;
          if (!key || !head)
            throw new NotFoundError(kind === 'label' ? IMAGE_MESSAGES.labelNotFound : IMAGE_MESSAGES.macroNotFound);
          return reply
            .type(kind === 'label' ? 'image/png' : 'image/jpeg')
            .header('Content-Length', head.size)
            .header('Cache-Control', 'private, max-age=300')
            .send(await storage.createReadStream(key));
        },
      );
    }

    r.get(
      '/api/signed-urls/image/:id',
      { config: { policy: policy.anyOf(['IM_ImagesListTab_DownloadImages']) }, schema: { params: idParams } },
      async (request) => {
        const principal = principalOf(request);
        const row = await images.visibleImage(principal, request.params.id);
        if (!(await storage.head(row.s3_key))) throw new NotFoundError(IMAGE_MESSAGES.couldNotDownload);
        const url = await storage.signedGetUrl(row.s3_key, config.uploadUrlTtlSeconds, row.name);
        await db.transaction().execute(async (tx) => {
          await recordAudit(tx, actorOf(request), [
            {
              action: 'IMAGE_DOWNLOADED',
              entityType: 'image',
              entityId: row.id,
              studyId: row.study_id,
              newValue: row.name,
            },
          ]);
        });
        return { success: true, url };
      },
    );
  };
}
