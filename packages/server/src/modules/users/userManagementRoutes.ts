import type { FastifyInstance } from 'fastify';
import type { Db } from '../../platform/db/database.js';
import { organizationRoutes } from './organizationRoutes.js';
import { roleRoutes } from './roleRoutes.js';
import { studyAccessRoutes } from '../studyAccess/studyAccessRoutes.js';
import { userAdminRoutes } from './userAdminRoutes.js';
import { userRoutes } from './userRoutes.js';

/** Every route of user management (issue 4): users, accounts, study access, organizations, roles. */
export function userManagementRoutes(db: Db) {
  return async (app: FastifyInstance) => {
    await app.register(userRoutes(db));
    await app.register(userAdminRoutes(db));
    await app.register(studyAccessRoutes(db));
    await app.register(organizationRoutes(db));
    await app.register(roleRoutes(db));
  };
}
