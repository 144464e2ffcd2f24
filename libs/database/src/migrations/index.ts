import { Initial1763683200000 } from './1763683200000-Initial';
import { DeliveryLease1763740800000 } from './1763740800000-DeliveryLease';
import { LeanDeliveryIndexes1763827200000 } from './1763827200000-LeanDeliveryIndexes';
import { OutboxCheckpoint1763913600000 } from './1763913600000-OutboxCheckpoint';
import { Messages1764000000000 } from './1764000000000-Messages';
import { GroupMembers1764086400000 } from './1764086400000-GroupMembers';
import { OrganizationQuotas1764090000000 } from './1764090000000-OrganizationQuotas';
import { MessageOrder1764100000000 } from './1764100000000-MessageOrder';
import { SessionLeaseToken1764110000000 } from './1764110000000-SessionLeaseToken';
import { SessionLastReason1764120000000 } from './1764120000000-SessionLastReason';
import { GroupNetwork1764200000000 } from './1764200000000-GroupNetwork';
import { MessageHeldAck1764210000000 } from './1764210000000-MessageHeldAck';
import { WebhookBreaker1764301551000 } from './1764301551000-WebhookBreaker';
import { MessageRevoked1764400000000 } from './1764400000000-MessageRevoked';
import { MessageMarks1764500000000 } from './1764500000000-MessageMarks';
import { Contacts1795638066197 } from './1795638066197-Contacts';
import { MessageActions1795638107714 } from './1795638107714-MessageActions';
import { AccountExtras1795638109218 } from './1795638109218-AccountExtras';
import { Chats1795638111850 } from './1795638111850-Chats';
import { GroupAdministration1795638441525 } from './1795638441525-GroupAdministration';
import { SessionProxy1795639128968 } from './1795639128968-SessionProxy';
import { MediaBlobs1795640000000 } from './1795640000000-MediaBlobs';
import { ChatLabels1795650098176 } from './1795650098176-ChatLabels';
import { FollowedChannels1795650098177 } from './1795650098177-FollowedChannels';
import { SessionMessageSeqs1795660000000 } from './1795660000000-SessionMessageSeqs';
import { LeaderLeases1795670037000 } from './1795670037000-LeaderLeases';

/** Every migration, in order. New ones are appended here. */
export const MIGRATIONS = [Initial1763683200000, DeliveryLease1763740800000, LeanDeliveryIndexes1763827200000, OutboxCheckpoint1763913600000, Messages1764000000000, GroupMembers1764086400000, OrganizationQuotas1764090000000, MessageOrder1764100000000, SessionLeaseToken1764110000000, SessionLastReason1764120000000, GroupNetwork1764200000000, MessageHeldAck1764210000000, WebhookBreaker1764301551000, MessageRevoked1764400000000, MessageMarks1764500000000, Contacts1795638066197, MessageActions1795638107714, AccountExtras1795638109218, Chats1795638111850, GroupAdministration1795638441525, SessionProxy1795639128968, MediaBlobs1795640000000, ChatLabels1795650098176, FollowedChannels1795650098177, SessionMessageSeqs1795660000000, LeaderLeases1795670037000];
