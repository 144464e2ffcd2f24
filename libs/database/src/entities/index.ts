import { ApiKey } from './api-key.entity';
import { Group } from './group.entity';
import { Organization } from './organization.entity';
import { SessionAuthKey } from './session-auth-key.entity';
import { Session } from './session.entity';
import { User } from './user.entity';
import { Webhook } from './webhook.entity';

export { ApiKey, Group, Organization, Session, SessionAuthKey, User, Webhook };

export const ENTITIES = [Organization, User, ApiKey, Session, SessionAuthKey, Group, Webhook];
