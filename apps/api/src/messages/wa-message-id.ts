/** The network id of an outbound message: libs/messaging (the gateway's campaigns mint them too). */
export { newWaMessageId } from '@app/messaging';
