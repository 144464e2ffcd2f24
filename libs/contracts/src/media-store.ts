/** Where inbound media is kept once downloaded (MEDIA_STORE): nowhere (fetched from the network on each GET), PostgreSQL, or an S3 bucket. */
export const MEDIA_STORE_KINDS = ['none', 'postgres', 's3'] as const;
export type MediaStoreKind = (typeof MEDIA_STORE_KINDS)[number];

/**
 * BullMQ queue of eager media downloads (under the deployment's Redis prefix): one job per inbound media message, with
 * the message id as job id (a message enqueued twice downloads once). The data carries the id only; the `messages`
 * row (its MediaRef) is the record.
 */
export const MEDIA_DOWNLOAD_QUEUE = 'media-downloads';
export const MEDIA_DOWNLOAD_JOB = 'download';

export interface MediaDownloadJobData {
  messageId: string;
}
