import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('organizations')
export class Organization {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ type: 'text' }) name: string;
  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' }) createdAt: Date;
}
